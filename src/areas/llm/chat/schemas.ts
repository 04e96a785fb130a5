// chat/completions request and response shapes (spec 2.5, 2.6, 8). Bounds are
// enforced by the route schema: anything outside them is a 400 naming the field,
// never silently clamped. Fields the spec does not name are ignored.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { GroundingFields, RagStatus, Snippet } from '../../grounding.js';

export const DEFAULT_MAX_TOKENS = 1024;
export const MAX_TOKENS_CEILING = 8192;
export const DEFAULT_TEMPERATURE = 0.7;
// The spec gives no bound for these; chosen to fit any real conversation while the
// body limit (GATEWAY_BODY_LIMIT_BYTES, 1 MiB by default) caps the request as a whole.
export const MAX_MESSAGES = 1000;
export const MAX_CONTENT_CHARS = 1_000_000;

const Message = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]),
  // Passed to the model as written: only NUL is refused (see gateway/text-rules.ts).
  content: Type.String({ maxLength: MAX_CONTENT_CHARS, text: 'verbatim' }),
});

/** What a request asks of the generation: shared by chat/completions and the persisted chat. */
export const GenerationFields = {
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING })),
  // OpenAI's range; engines disagree beyond it.
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  stream: Type.Optional(Type.Boolean()),
  stream_options: Type.Optional(
    Type.Object({
      // The OpenAI convention: a usage-only frame before [DONE].
      include_usage: Type.Optional(Type.Boolean()),
      // Ours: `"choices": []` on the metadata frame, for clients that expect choices on every frame.
      metadata_choices: Type.Optional(Type.Boolean()),
      metadata_frame: Type.Optional(Type.Union([Type.Literal('spec'), Type.Literal('empty_choices'), Type.Literal('chunk')])),
    }),
  ),
};

export const ChatCompletionBody = Type.Object({
  messages: Type.Array(Message, { minItems: 1, maxItems: MAX_MESSAGES }),
  ...GenerationFields,
  // Grounding in the tenant's documents (workspaceIds, collectionIds, ragScopes): see areas/grounding.ts.
  ...GroundingFields,
});
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

export const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const ChatCompletion = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
      finish_reason: Type.String(),
    }),
  ),
  usage: Usage,
  rag_snippets: Type.Union([Type.Array(Snippet), Type.Null()]),
  rag_active: Type.Boolean(),
  rag_status: RagStatus,
});
export type ChatCompletion = Static<typeof ChatCompletion>;
