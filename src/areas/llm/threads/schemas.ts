// Request shapes of /threads and /threads/{thread_id}/messages (OpenAI's Assistants v2,
// snake_case). The response objects are in objects.ts.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { MAX_CONTENT_CHARS } from '../chat/schemas.js';
import { ListQuery } from '../history/pages.js';
import { MetadataField, ScopeFields, ToolFields } from './fields.js';

export const MAX_CONTENT_PARTS = 100;
export const MAX_THREAD_MESSAGES = 100;

/**
 * OpenAI's content parts. Only text is supported; the image parts (`image_file`,
 * `image_url`) pass the schema so that the service can say so by name.
 */
export const ContentPart = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 32 }),
  text: Type.Optional(Type.String({ maxLength: MAX_CONTENT_CHARS, text: 'verbatim' })),
});

export const NewMessage = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([
    Type.String({ maxLength: MAX_CONTENT_CHARS, text: 'verbatim' }),
    Type.Array(ContentPart, { maxItems: MAX_CONTENT_PARTS }),
  ]),
  /** File attachments: not supported yet, so only an empty list (or null) passes the service. */
  attachments: Type.Optional(Type.Union([Type.Array(Type.Unknown(), { maxItems: 20 }), Type.Null()])),
  metadata: MetadataField,
});
export type NewMessage = Static<typeof NewMessage>;

export const MessagePatch = Type.Object({ metadata: MetadataField });
export type MessagePatch = Static<typeof MessagePatch>;

export const NewThread = Type.Object({
  messages: Type.Optional(Type.Array(NewMessage, { maxItems: MAX_THREAD_MESSAGES })),
  metadata: MetadataField,
  ...ScopeFields,
  tool_resources: ToolFields.tool_resources,
});
export type NewThread = Static<typeof NewThread>;

export const ThreadPatch = Type.Object({
  metadata: MetadataField,
  ...ScopeFields,
  tool_resources: ToolFields.tool_resources,
});
export type ThreadPatch = Static<typeof ThreadPatch>;

export const ThreadParams = Type.Object({ threadId: Type.String() });
export const MessageParams = Type.Object({ threadId: Type.String(), messageId: Type.String() });

/** OpenAI's message list query: paging, and only the messages one run wrote. */
export const MessageListQuery = Type.Object({
  ...ListQuery.properties,
  run_id: Type.Optional(Type.String({ maxLength: 64 })),
});
export type MessageListQuery = Static<typeof MessageListQuery>;

export const ThreadDeleted = Type.Object({ id: Type.String(), object: Type.Literal('thread.deleted'), deleted: Type.Literal(true) });
export const MessageDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.message.deleted'),
  deleted: Type.Literal(true),
});
