// chat/completions request and response shapes (spec 2.5, 2.6, 8), OpenAI's chat
// request as OpenAI documents it. Bounds are enforced by the route schema and, for
// what a schema cannot say, by body-rules.ts: anything outside them is a 400 naming
// the field, never silently clamped. Fields neither names are ignored, and never
// forwarded (the engine request is built from known fields only).
import { Type, type Static } from '@fastify/type-provider-typebox';
import { GroundingFields, RagStatus, Snippet } from '../../grounding.js';

export const DEFAULT_MAX_TOKENS = 1024;
export const MAX_TOKENS_CEILING = 8192;
export const DEFAULT_TEMPERATURE = 0.7;
// The spec gives no bound for these; chosen to fit any real conversation while the
// body limit (GATEWAY_BODY_LIMIT_BYTES, 1 MiB by default) caps the request as a whole.
export const MAX_MESSAGES = 1000;
export const MAX_CONTENT_CHARS = 1_000_000;

// OpenAI's chat request (tools, structured output, sampling fields, content parts):
// the bounds below are ours where OpenAI gives none, each chosen so that one request
// cannot hold a node or the gateway for long, and checked, never clamped.
export const MAX_CONTENT_PARTS = 256;
/** Tools per request; OpenAI allows 128. */
export const MAX_TOOLS = 128;
export const MAX_TOOL_CALLS = 128;
/** A tool's `parameters` or response_format's `schema`: serialized size and nesting (checked after Ajv, body-rules.ts). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_SCHEMA_DEPTH = 32;
/**
 * `n`: every choice is a whole generation on the node, so n multiplies the work one
 * request asks of it. 8 covers best-of sampling; OpenAI's own 128 would let one
 * request take a node's whole batch.
 */
export const MAX_CHOICES = 8;
export const MAX_STOP = 4;
export const MAX_LOGIT_BIAS = 300;
export const MAX_METADATA = 16;
/** OpenAI's rule for function and schema names. */
export const NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

// Text the model reads as written: anything but NUL (see gateway/text-rules.ts).
const Verbatim = (maxLength: number) => Type.String({ maxLength, text: 'verbatim' });
/** A JSON schema object: its shape is the engine's business; its size and depth are checked in body-rules.ts. */
const JsonSchema = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

// One object for both kinds, rather than a union: a bad part is then reported at the
// field that is wrong, not as "does not match any of". body-rules.ts checks that each
// kind has its member.
const ContentPart = Type.Object({
  type: Type.Union([Type.Literal('text'), Type.Literal('image_url')]),
  text: Type.Optional(Verbatim(MAX_CONTENT_CHARS)),
  image_url: Type.Optional(
    Type.Object({
      // A web address or a data: URL; the body limit bounds it in practice.
      url: Type.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS }),
      detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
    }),
  ),
});

const ToolCall = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 256 }),
    // JSON text as the model wrote it.
    arguments: Verbatim(MAX_CONTENT_CHARS),
  }),
});

// Which fields a role may carry (tool_call_id only on tool messages, null content only
// beside tool_calls…) is checked in body-rules.ts, naming the field.
const Message = Type.Object({
  role: Type.Union([
    Type.Literal('system'),
    Type.Literal('developer'),
    Type.Literal('user'),
    Type.Literal('assistant'),
    Type.Literal('tool'),
  ]),
  // Passed to the model as written: only NUL is refused (see gateway/text-rules.ts).
  content: Type.Optional(
    Type.Union([Verbatim(MAX_CONTENT_CHARS), Type.Array(ContentPart, { minItems: 1, maxItems: MAX_CONTENT_PARTS }), Type.Null()]),
  ),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: MAX_TOOL_CALLS })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
export type ChatBodyMessage = Static<typeof Message>;

const Tool = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ pattern: NAME_PATTERN }),
    description: Type.Optional(Verbatim(MAX_SCHEMA_BYTES)),
    parameters: Type.Optional(JsonSchema),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  }),
});

const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String({ pattern: NAME_PATTERN }) }) }),
]);

// One object for the three types (see ContentPart); body-rules.ts requires `json_schema` with its type.
const ResponseFormat = Type.Object({
  type: Type.Union([Type.Literal('text'), Type.Literal('json_object'), Type.Literal('json_schema')]),
  json_schema: Type.Optional(
    Type.Object({
      name: Type.String({ pattern: NAME_PATTERN }),
      description: Type.Optional(Verbatim(MAX_SCHEMA_BYTES)),
      schema: Type.Optional(JsonSchema),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    }),
  ),
});

const StopSequence = Type.String({ minLength: 1, maxLength: 1024, text: 'verbatim' });

/** OpenAI's request fields past the generation fields the persisted chat shares; forwarded to engines as ChatRequest.options. */
const OpenAIFields = {
  tools: Type.Optional(Type.Array(Tool, { maxItems: MAX_TOOLS })),
  tool_choice: Type.Optional(ToolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  response_format: Type.Optional(ResponseFormat),
  stop: Type.Optional(Type.Union([StopSequence, Type.Array(StopSequence, { maxItems: MAX_STOP })])),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  seed: Type.Optional(Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHOICES })),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  // Token ids (as OpenAI's tokenizer numbers them) to a bias.
  logit_bias: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]{1,10}$' }), Type.Number({ minimum: -100, maximum: 100 }), {
      maxProperties: MAX_LOGIT_BIAS,
      additionalProperties: false,
    }),
  ),
  logprobs: Type.Optional(Type.Boolean()),
  top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 512, text: 'multiline' }), {
      maxProperties: MAX_METADATA,
      propertyNames: { type: 'string', maxLength: 64 },
    }),
  ),
  // OpenAI's newer name of max_tokens: the same bound, and the same meaning (both given must agree).
  max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING })),
};

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
    }),
  ),
};

export const ChatCompletionBody = Type.Object({
  messages: Type.Array(Message, { minItems: 1, maxItems: MAX_MESSAGES }),
  ...GenerationFields,
  ...OpenAIFields,
  // Grounding in the tenant's documents (workspaceIds, collectionIds, ragScopes): see areas/grounding.ts.
  ...GroundingFields,
});
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

export const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

const ResponseToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

// Every field is listed: the serializer drops what the schema does not name.
export const ChatCompletion = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  system_fingerprint: Type.Optional(Type.String()),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({
        role: Type.Literal('assistant'),
        // null when the model only called tools, as OpenAI answers.
        content: Type.Union([Type.String(), Type.Null()]),
        tool_calls: Type.Optional(Type.Array(ResponseToolCall)),
      }),
      // OpenAI's logprobs object, as the engine gave it.
      logprobs: Type.Optional(Type.Unknown()),
      finish_reason: Type.String(),
    }),
  ),
  usage: Usage,
  rag_snippets: Type.Union([Type.Array(Snippet), Type.Null()]),
  rag_active: Type.Boolean(),
  rag_status: RagStatus,
});
export type ChatCompletion = Static<typeof ChatCompletion>;
