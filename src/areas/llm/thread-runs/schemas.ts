// Request shapes of the runs API (OpenAI Assistants v2, snake_case). Bounds are the
// schema's: outside them is a 400 naming the field. Fields OpenAI defines that would
// change what a run does and that we do not support (tools, tool_choice other than
// none/auto, response_format other than auto/text, top_p other than 1, truncation
// other than auto) are declared loosely here and refused by name in service.ts;
// anything else unknown is ignored, as OpenAI's clients expect of additive APIs.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_SCOPE_IDS } from '../../grounding.js';
import { MAX_TOKENS_CEILING } from '../chat/schemas.js';

export const MAX_INSTRUCTIONS_CHARS = 256_000;
export const MAX_MESSAGE_CHARS = 256_000;
export const MAX_ADDITIONAL_MESSAGES = 100;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

// OpenAI's metadata: up to 16 pairs, keys of 64 characters, values of 512.
export const Metadata = Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 512 }), {
  maxProperties: 16,
});

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Ids = Type.Array(Id, { maxItems: MAX_SCOPE_IDS });
const Instructions = Type.String({ maxLength: MAX_INSTRUCTIONS_CHARS, text: 'verbatim' });

/** A message added with the run (`additional_messages`, a new thread's `messages`): text only. */
export const MessageInput = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([
    Type.String({ maxLength: MAX_MESSAGE_CHARS, text: 'verbatim' }),
    Type.Array(
      Type.Object({
        type: Type.Literal('text'),
        text: Type.String({ maxLength: MAX_MESSAGE_CHARS, text: 'verbatim' }),
      }),
      { minItems: 1, maxItems: 32 },
    ),
  ]),
  attachments: Type.Optional(Nullable(Type.Array(Type.Object({}), { maxItems: 0 }))),
  metadata: Type.Optional(Nullable(Metadata)),
});
export type MessageInput = Static<typeof MessageInput>;

/** What a run is asked with, on both creates. */
export const RunFields = {
  assistant_id: Id,
  model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  instructions: Type.Optional(Nullable(Instructions)),
  additional_instructions: Type.Optional(Nullable(Instructions)),
  additional_messages: Type.Optional(Nullable(Type.Array(MessageInput, { maxItems: MAX_ADDITIONAL_MESSAGES }))),
  // The grounding scope (the tenant's extension): the thread's, else the assistant's, when left out.
  workspace_ids: Type.Optional(Nullable(Ids)),
  collection_ids: Type.Optional(Nullable(Ids)),
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING }))),
  max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  metadata: Type.Optional(Nullable(Metadata)),
  stream: Type.Optional(Nullable(Type.Boolean())),
  // Refused unless they ask for what we do anyway (service.ts).
  tools: Type.Optional(Nullable(Type.Array(Type.Object({}), { maxItems: 128 }))),
  tool_choice: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Object({})]))),
  response_format: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Object({})]))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  truncation_strategy: Type.Optional(Nullable(Type.Object({}))),
  max_prompt_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
};

export const CreateRunBody = Type.Object(RunFields);
export type CreateRunBody = Static<typeof CreateRunBody>;

export const CreateThreadAndRunBody = Type.Object({
  ...RunFields,
  thread: Type.Optional(
    Nullable(
      Type.Object({
        messages: Type.Optional(Nullable(Type.Array(MessageInput, { maxItems: MAX_ADDITIONAL_MESSAGES }))),
        metadata: Type.Optional(Nullable(Metadata)),
        workspace_ids: Type.Optional(Nullable(Ids)),
        collection_ids: Type.Optional(Nullable(Ids)),
      }),
    ),
  ),
});
export type CreateThreadAndRunBody = Static<typeof CreateThreadAndRunBody>;

export const ModifyRunBody = Type.Object({ metadata: Type.Optional(Nullable(Metadata)) });
export type ModifyRunBody = Static<typeof ModifyRunBody>;

// Path ids of another shape are a 404 (service.ts), like ids that are not there.
export const ThreadParams = Type.Object({ threadId: Type.String() });
export const RunParams = Type.Object({ threadId: Type.String(), runId: Type.String() });
export const StepParams = Type.Object({ threadId: Type.String(), runId: Type.String(), stepId: Type.String() });
