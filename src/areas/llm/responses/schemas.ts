// The Responses API's request and answer shapes (OpenAI's, snake_case, unix seconds).
// The body schema checks the simple fields' types and bounds; `input`, `tools`,
// `tool_choice` and `text` have many shapes and are checked by input.ts and
// options.ts, which name the offending field (never a union's muddled message).
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_TOKENS_CEILING } from '../chat/schemas.js';
import { Metadata, ScopeFields } from '../threads/fields.js';

// Bounds of our own where OpenAI documents none: the body limit caps the whole anyway.
export const MAX_INPUT_ITEMS = 1000;
export const MAX_TOOLS = 128;

const Id = Type.String({ minLength: 1, maxLength: 200 });

export const CreateResponseBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  input: Type.Optional(Type.Union([Type.String({ text: 'verbatim' }), Type.Array(Type.Unknown(), { maxItems: MAX_INPUT_ITEMS })])),
  instructions: Type.Optional(Type.Union([Type.String({ text: 'verbatim' }), Type.Null()])),
  max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING }), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
  previous_response_id: Type.Optional(Type.Union([Id, Type.Null()])),
  conversation: Type.Optional(Type.Union([Id, Type.Object({ id: Id }), Type.Null()])),
  tools: Type.Optional(Type.Array(Type.Unknown(), { maxItems: MAX_TOOLS })),
  tool_choice: Type.Optional(Type.Unknown()),
  parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  text: Type.Optional(Type.Union([Type.Object({ format: Type.Optional(Type.Unknown()) }), Type.Null()])),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled'), Type.Null()])),
  // Refused when asked for (options.ts): listed so that their types are checked too.
  background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  include: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }), Type.Null()])),
  reasoning: Type.Optional(Type.Unknown()),
  prompt: Type.Optional(Type.Unknown()),
  top_logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 20 }), Type.Null()])),
  // Grounding in the tenant's documents: our extension, snake_case as the threads API has it.
  ...ScopeFields,
});
export type CreateResponseBody = Static<typeof CreateResponseBody>;

export const ResponseParams = Type.Object({ responseId: Type.String({ maxLength: 200 }) });

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const OutputText = Type.Object({
  type: Type.Literal('output_text'),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
  logprobs: Type.Array(Type.Unknown()),
});

const ItemStatus = Type.Union([Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('incomplete')]);

export const MessageItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('message'),
  role: Type.String(),
  status: ItemStatus,
  // Output messages hold output_text parts; input messages input_text, input_image or output_text parts.
  content: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});

export const FunctionCallItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('function_call'),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  status: ItemStatus,
});

export const FunctionCallOutputItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('function_call_output'),
  call_id: Type.String(),
  output: Type.String(),
  status: ItemStatus,
});

// The items of tools the platform runs itself (mcp tools), in OpenAI's shapes.
export const McpListToolsItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_list_tools'),
  server_label: Type.String(),
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.Union([Type.String(), Type.Null()]),
      input_schema: Type.Unknown(),
      annotations: Type.Union([Type.Unknown(), Type.Null()]),
    }),
  ),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const McpCallItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_call'),
  server_label: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  output: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('in_progress'), Type.Literal('calling')]),
  approval_request_id: Type.Union([Type.String(), Type.Null()]),
});

export const McpApprovalRequestItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_approval_request'),
  server_label: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
});

export const McpApprovalResponseItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_approval_response'),
  approval_request_id: Type.String(),
  approve: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
});

export type McpListToolsItem = Static<typeof McpListToolsItem>;
export type McpCallItem = Static<typeof McpCallItem>;
export type McpApprovalRequestItem = Static<typeof McpApprovalRequestItem>;

export const OutputItem = Type.Union([MessageItem, FunctionCallItem, McpListToolsItem, McpCallItem, McpApprovalRequestItem]);
export const InputItem = Type.Union([MessageItem, FunctionCallItem, FunctionCallOutputItem, McpApprovalResponseItem]);
export type OutputItem = Static<typeof OutputItem>;
export type InputItem = Static<typeof InputItem>;

export const ResponseUsage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});

export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  completed_at: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.String(),
  background: Type.Boolean(),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  incomplete_details: Type.Union([Type.Object({ reason: Type.String() }), Type.Null()]),
  instructions: Nullable(Type.String()),
  max_output_tokens: Type.Union([Type.Integer(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Nullable(Type.String()),
  conversation: Type.Union([Type.Object({ id: Type.String() }), Type.Null()]),
  store: Type.Boolean(),
  temperature: Type.Union([Type.Number(), Type.Null()]),
  text: Type.Object({ format: Type.Unknown() }),
  tool_choice: Type.Unknown(),
  tools: Type.Array(Type.Unknown()),
  top_p: Type.Union([Type.Number(), Type.Null()]),
  truncation: Type.String(),
  usage: Type.Union([ResponseUsage, Type.Null()]),
  user: Type.Optional(Type.String()),
  // Ours, when the response was grounded (as chat/completions' rag_* fields).
  rag_snippets: Type.Optional(Type.Unknown()),
  rag_active: Type.Optional(Type.Boolean()),
  rag_status: Type.Optional(Type.String()),
  workspace_ids: Type.Optional(Type.Array(Type.String())),
  collection_ids: Type.Optional(Type.Array(Type.String())),
});
export type ResponseObject = Static<typeof ResponseObject>;

export const InputItemList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(InputItem),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
  has_more: Type.Boolean(),
});

export const DeletedResponse = Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) });
