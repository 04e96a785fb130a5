// The assistant object as OpenAI's Assistants v2 shapes it, plus the tenant's own
// extensions (workspace_ids, collection_ids: the grounding scope; max_tokens), and the
// create and modify requests.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_TOKENS_CEILING } from '../chat/schemas.js';
import { Metadata, MetadataField, ScopeFields, ToolFields } from '../threads/fields.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const AssistantObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('assistant'),
  created_at: Type.Integer(),
  name: NullableString,
  description: NullableString,
  model: Type.String(),
  instructions: NullableString,
  tools: Type.Array(Type.Object({})),
  tool_resources: Type.Object({}),
  metadata: Metadata,
  temperature: Type.Union([Type.Number(), Type.Null()]),
  top_p: Type.Null(),
  response_format: Type.Literal('auto'),
  workspace_ids: Type.Array(Type.String()),
  collection_ids: Type.Array(Type.String()),
  max_tokens: Type.Union([Type.Integer(), Type.Null()]),
});
export type AssistantObject = Static<typeof AssistantObject>;

// OpenAI's bounds for the texts.
const Name = Type.String({ maxLength: 256 });
const Description = Type.String({ maxLength: 512, text: 'multiline' });
const Instructions = Type.String({ maxLength: 256_000, text: 'verbatim' });
const Model = Type.String({ minLength: 1, maxLength: 256 });
const Temperature = Type.Number({ minimum: 0, maximum: 2 });
const MaxTokens = Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING });
const nullable = <T extends ReturnType<typeof Type.String | typeof Type.Number | typeof Type.Integer>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

// What an assistant carries besides its model; every field optional, null clears a nullable one.
const AssistantFields = {
  name: nullable(Name),
  description: nullable(Description),
  instructions: nullable(Instructions),
  temperature: nullable(Temperature),
  max_tokens: nullable(MaxTokens),
  metadata: MetadataField,
  ...ScopeFields,
  ...ToolFields,
};

export const NewAssistant = Type.Object({ model: Model, ...AssistantFields });
export type NewAssistant = Static<typeof NewAssistant>;

/** Every field optional; a field left out is kept. */
export const AssistantPatch = Type.Object({ model: Type.Optional(Model), ...AssistantFields });
export type AssistantPatch = Static<typeof AssistantPatch>;

export const AssistantParams = Type.Object({ assistantId: Type.String() });

export const AssistantDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('assistant.deleted'),
  deleted: Type.Literal(true),
});
