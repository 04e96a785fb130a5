// Rows of the history store as the conversations API shows them.
import type { Grounding } from '../grounding/ground.js';
import type { ConversationRow, ItemRow } from '../history/repository.js';
import type { Conversation, Message } from './schemas.js';

export const toConversation = (row: ConversationRow): Conversation => ({
  id: row.id,
  title: row.title,
  messageCount: row.item_count,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export function toMessage(row: ItemRow): Message {
  const grounding = row.grounding as Grounding | null;
  return {
    id: row.id,
    // A chat conversation holds system, user and assistant items only (responses/ writes no other role into one).
    role: row.role as Message['role'],
    content: row.content,
    status: row.status,
    ...(row.incomplete_reason ? { incompleteReason: row.incomplete_reason } : {}),
    ...(row.model ? { model: row.model } : {}),
    ...(row.usage ? { usage: row.usage } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
    ...(grounding ? { rag_snippets: grounding.snippets, rag_active: grounding.active, rag_status: grounding.status } : {}),
  };
}
