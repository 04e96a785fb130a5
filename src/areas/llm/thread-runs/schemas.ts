// Request shapes of the runs API (OpenAI Assistants v2, snake_case). Bounds are the
// schema's: outside them is a 400 naming the field. Fields OpenAI defines that would
// change what a run does and that we do not support (tools, tool_choice other than
// none/auto, response_format other than auto/text, top_p other than 1, truncation
// other than auto) are declared loosely here and refused by name in service.ts;
// anything else unknown is ignored, as OpenAI's clients expect of additive APIs.
// Messages, threads, metadata and scopes are the threads API's own shapes (threads/).
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_TOKENS_CEILING } from '../chat/schemas.js';
import { MetadataField, ScopeFields, ToolFields } from '../threads/fields.js';
import { MAX_THREAD_MESSAGES, NewMessage, NewThread } from '../threads/schemas.js';

export const MAX_INSTRUCTIONS_CHARS = 256_000;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Instructions = Type.String({ maxLength: MAX_INSTRUCTIONS_CHARS, text: 'verbatim' });

/** What a run is asked with, on both creates. */
export const RunFields = {
  assistant_id: Type.String({ minLength: 1, maxLength: 200 }),
  model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  instructions: Type.Optional(Nullable(Instructions)),
  additional_instructions: Type.Optional(Nullable(Instructions)),
  additional_messages: Type.Optional(Nullable(Type.Array(NewMessage, { maxItems: MAX_THREAD_MESSAGES }))),
  // The grounding scope (the tenant's extension): the thread's, else the assistant's, when both are left out.
  ...ScopeFields,
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING }))),
  max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  metadata: MetadataField,
  stream: Type.Optional(Nullable(Type.Boolean())),
  // Refused unless they ask for what we do anyway (create.ts).
  ...ToolFields,
  tool_choice: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Object({})]))),
  response_format: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: 64 }), Type.Object({})]))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  truncation_strategy: Type.Optional(Nullable(Type.Object({}))),
  max_prompt_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
};

export const CreateRunBody = Type.Object(RunFields);
export type CreateRunBody = Static<typeof CreateRunBody>;

/** POST /threads/runs: the run's fields and the new thread (POST /threads's body). */
export const CreateThreadAndRunBody = Type.Object({ ...RunFields, thread: Type.Optional(Nullable(NewThread)) });
export type CreateThreadAndRunBody = Static<typeof CreateThreadAndRunBody>;

export const ModifyRunBody = Type.Object({ metadata: MetadataField });
export type ModifyRunBody = Static<typeof ModifyRunBody>;

// Path ids of another shape are a 404 (service.ts), like ids that are not there.
export const ThreadParams = Type.Object({ threadId: Type.String() });
export const RunParams = Type.Object({ threadId: Type.String(), runId: Type.String() });
export const StepParams = Type.Object({ threadId: Type.String(), runId: Type.String(), stepId: Type.String() });
