// A thread's messages: the items of its conversation, in position order. The user (or
// the caller, for an assistant turn it writes itself) adds them here; a run appends the
// assistant's. One active run per thread: while a run is active no message may be
// added (OpenAI answers 400, not 409, which its SDK would retry), checked and appended
// under the thread's row lock so that a run starting at the same moment cannot slip in.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { AppError, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { listOf, pageOf, type List } from '../history/pages.js';
import { itemRepository, type ConversationRow, type ItemRow } from '../history/repository.js';
import { notFoundWithId, requireIdShape } from './fields.js';
import { messageObject, type MessageObject } from './objects.js';
import { threadRow } from './rows.js';
import type { MessageListQuery, MessagePatch, NewMessage } from './schemas.js';

export interface MessageDeps {
  db: Database;
}

/** A message request, checked: what the store keeps of it. */
export interface MessageInput {
  role: 'user' | 'assistant';
  content: string;
  metadata: Record<string, string>;
}

/** Separates the text parts of one message in the stored content (the model reads them as one text). */
const PART_SEPARATOR = '\n\n';

/**
 * Checks a message request. `field` prefixes the names in the 400s (`messages[2].` in a
 * thread's create). Image parts and attachments are refused by name: not supported yet.
 */
export function messageInputOf(body: NewMessage, field = ''): MessageInput {
  let content: string;
  if (typeof body.content === 'string') content = body.content;
  else {
    const texts = body.content.map((part, i) => {
      if (part.type !== 'text')
        throw validation(`${field}content[${i}].type`, `${part.type} parts are not supported yet: send text (type "text")`);
      if (part.text === undefined) throw validation(`${field}content[${i}].text`, 'is required');
      return part.text;
    });
    content = texts.join(PART_SEPARATOR);
  }
  if (content.trim() === '') throw validation(`${field}content`, 'must not be empty');
  if (body.attachments && body.attachments.length > 0)
    throw validation(`${field}attachments`, 'file attachments are not supported yet: send an empty list or leave the field out');
  return { role: body.role, content, metadata: body.metadata ?? {} };
}

/** Appends messages to a thread, in order (the caller holds the thread's lock, or just created it). */
export async function insertMessages(q: Queryable, thread: ConversationRow, inputs: readonly MessageInput[]): Promise<ItemRow[]> {
  const rows: ItemRow[] = [];
  for (const input of inputs) {
    rows.push(
      await itemRepository.append(q, {
        id: newId('message'),
        conversation_id: thread.id,
        tenant_id: thread.tenant_id,
        role: input.role,
        content: input.content,
        status: 'completed',
        metadata: input.metadata,
      }),
    );
  }
  return rows;
}

/** OpenAI's refusal of a message while a run is active (400: the SDK does not retry it). */
export const activeRunRefusal = (threadId: string, runId: string) =>
  new AppError('BAD_REQUEST', `Can't add messages to ${threadId} while a run ${runId} is active.`);

/** POST /threads/{id}/messages. */
export async function appendMessage(deps: MessageDeps, principal: Principal, threadId: string, body: NewMessage): Promise<MessageObject> {
  const input = messageInputOf(body);
  const [row] = await deps.db.tx(async (q) => {
    const thread = await threadRow(q, principal, threadId, true);
    if (thread.active_run_id) throw activeRunRefusal(thread.id, thread.active_run_id);
    return insertMessages(q, thread, [input]);
  });
  return messageObject(row!);
}

async function messageRow(q: Queryable, principal: Principal, threadId: string, messageId: string): Promise<ItemRow> {
  const thread = await threadRow(q, principal, threadId);
  requireIdShape('message', messageId);
  const row = await itemRepository.get(q, principal.tenantId, thread.id, messageId);
  if (!row) throw notFoundWithId('message', messageId);
  return row;
}

export async function getMessage(deps: MessageDeps, principal: Principal, threadId: string, messageId: string): Promise<MessageObject> {
  return messageObject(await messageRow(deps.db, principal, threadId, messageId));
}

/** The message as it is now, or undefined when it (or its thread) is gone: an idempotent create's replay. */
export async function findMessage(
  deps: MessageDeps,
  principal: Principal,
  threadId: string,
  messageId: string,
): Promise<MessageObject | undefined> {
  try {
    return await getMessage(deps, principal, threadId, messageId);
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return undefined;
    throw error;
  }
}

/** GET /threads/{id}/messages: OpenAI's list (newest first unless `order=asc`), `run_id` for one run's. */
export async function listMessages(
  deps: MessageDeps,
  principal: Principal,
  threadId: string,
  query: MessageListQuery,
): Promise<List<MessageObject>> {
  const page = pageOf(query, (id) => isId('message', id));
  if (query.run_id !== undefined && !isId('run', query.run_id)) throw validation('run_id', 'must be the id of a run of this thread');
  const thread = await threadRow(deps.db, principal, threadId);
  const rows = await itemRepository.list(deps.db, principal.tenantId, thread.id, {
    ...page,
    ...(query.run_id !== undefined ? { runId: query.run_id } : {}),
  });
  return listOf(rows, page, messageObject);
}

/** POST /threads/{id}/messages/{id}: only metadata changes (replaced; null clears it). */
export async function updateMessage(
  deps: MessageDeps,
  principal: Principal,
  threadId: string,
  messageId: string,
  body: MessagePatch,
): Promise<MessageObject> {
  const current = await messageRow(deps.db, principal, threadId, messageId);
  if (body.metadata === undefined) return messageObject(current);
  const row = await itemRepository.updateMetadata(deps.db, principal.tenantId, threadId, messageId, body.metadata ?? {});
  if (!row) throw notFoundWithId('message', messageId);
  return messageObject(row);
}

/**
 * DELETE /threads/{id}/messages/{id}. A message a run is still writing cannot be deleted
 * (400): the run would write into nothing. Its status only ever leaves in_progress, so
 * a message read as finished stays deletable.
 */
export async function deleteMessage(deps: MessageDeps, principal: Principal, threadId: string, messageId: string) {
  const row = await messageRow(deps.db, principal, threadId, messageId);
  if (row.status === 'in_progress')
    throw new AppError(
      'BAD_REQUEST',
      `Can't delete message ${messageId} while ${row.run_id ? `run ${row.run_id}` : 'a run'} is writing it; cancel the run first.`,
    );
  if (!(await itemRepository.delete(deps.db, principal.tenantId, threadId, messageId))) throw notFoundWithId('message', messageId);
  return { id: messageId, object: 'thread.message.deleted' as const, deleted: true as const };
}
