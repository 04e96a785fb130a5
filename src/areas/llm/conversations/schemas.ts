// The persisted chat (spec 2.7, 4 rule 3) and the conversations it keeps: request
// and response shapes. Field names are camelCase like chat/completions' request;
// the usage and rag_* fields keep chat/completions' own spelling, so one client
// reads both answers alike. Bounds are chat/completions' (spec 8): anything outside
// them is a 400 naming the field, never clamped.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { GroundingFields, RagStatus, Snippet } from '../../grounding.js';
import { Page } from '../../paging.js';
import { Text, Timestamp } from '../../schemas.js';
import { GenerationFields, MAX_CONTENT_CHARS, Usage } from '../chat/schemas.js';

export const TITLE_MAX_CHARS = 200;
export const PAGE_MAX = 100;

// Any typed id (`conv_…`, but also `thread_…`: a thread is not a conversation of this
// API, and says so with the same 404 as an unknown one rather than a 400).
const ID_SHAPE = '^[a-z]{2,10}_[0-9A-HJKMNP-TV-Z]{26}$';

export const ChatBody = Type.Object({
  // Passed to the model as written (only NUL is refused, as for chat/completions' content), but not blank.
  message: Type.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS, pattern: '\\S', text: 'verbatim' }),
  /** The conversation to continue (a `conversationId` an earlier turn returned); none starts one. */
  conversationId: Type.Optional(Type.String({ pattern: ID_SHAPE })),
  ...GenerationFields,
  ...GroundingFields,
});
export type ChatBody = Static<typeof ChatBody>;

/** The answer to one turn (JSON; a stream sends chat/completions' frames instead). */
export const ChatTurn = Type.Object({
  conversationId: Type.String(),
  /** The assistant message this turn stored. */
  messageId: Type.String(),
  message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
  model: Type.String(),
  usage: Usage,
  rag_snippets: Type.Union([Type.Array(Snippet), Type.Null()]),
  rag_active: Type.Boolean(),
  rag_status: RagStatus,
  createdAt: Timestamp,
  /** `stop`, or `length` when max_tokens cut the answer (the message is then stored incomplete). */
  finish_reason: Type.String(),
});
export type ChatTurn = Static<typeof ChatTurn>;

export const Conversation = Type.Object({
  id: Type.String(),
  /** Made from the first message; changed with PATCH. */
  title: Type.Union([Type.String(), Type.Null()]),
  messageCount: Type.Integer(),
  createdAt: Timestamp,
  /** Last activity (a turn, a rename): the list is newest first by it. */
  updatedAt: Timestamp,
});
export type Conversation = Static<typeof Conversation>;

export const Message = Type.Object({
  id: Type.String(),
  role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.String(),
  /** `in_progress` while generated; `incomplete` when cut short (max_tokens, client gone, engine failure, shutdown). */
  status: Type.Union([Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('incomplete')]),
  /** With `incomplete`: max_tokens, client_disconnected, run_failed, run_cancelled. */
  incompleteReason: Type.Optional(Type.String()),
  /** Assistant messages: the model that generated it. */
  model: Type.Optional(Type.String()),
  usage: Type.Optional(Usage),
  createdAt: Timestamp,
  completedAt: Type.Optional(Timestamp),
  /** Grounded turns' assistant messages: what the answer was given, as chat/completions reports it. */
  rag_snippets: Type.Optional(Type.Union([Type.Array(Snippet), Type.Null()])),
  rag_active: Type.Optional(Type.Boolean()),
  rag_status: Type.Optional(RagStatus),
});
export type Message = Static<typeof Message>;

const Next = Type.Union([Type.String(), Type.Null()]);

/** `?limit=1..100` (20 by default), `after` (a conversation id) and `q` (the title; areas/paging.ts). */
export const ConversationPage = Page(Conversation);
export type ConversationPage = Static<typeof ConversationPage>;

/** One conversation with a page of its messages, oldest first. */
export const ConversationWithMessages = Type.Object({
  ...Conversation.properties,
  messages: Type.Object({ data: Type.Array(Message), next: Next }),
});
export type ConversationWithMessages = Static<typeof ConversationWithMessages>;

export const ConversationParams = Type.Object({ conversationId: Type.String() });

/** `?limit=1..100&after=<cursor>`: strings on the wire (no coercion), checked by the service. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ maxLength: 10 })),
  after: Type.Optional(Type.String({ maxLength: 64 })),
});
export type PageQuery = Static<typeof PageQuery>;

export const ConversationPatch = Type.Object({ title: Text(TITLE_MAX_CHARS) });
export type ConversationPatch = Static<typeof ConversationPatch>;
