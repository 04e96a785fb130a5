// Threads: conversations of surface `thread` in the history store, the caller's own
// (tenant and owner from the credential, llm/history/owner.ts). Another owner's or
// tenant's thread is a 404 exactly like one that does not exist. Messages are in
// messages.ts; runs (which generate the assistant's messages) in thread-runs/.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { CheckScope } from '../../grounding.js';
import { ownerOf } from '../history/owner.js';
import { listOf, pageOf, type List, type ListQuery } from '../history/pages.js';
import { conversationRepository, type ConversationRow, type ItemRow, type StoredScope } from '../history/repository.js';
import type { RunExecutor } from '../runs/executor.js';
import { notFoundWithId, refuseTools, scopeOf } from './fields.js';
import { threadRow } from './rows.js';
import { insertMessages, messageInputOf, type MessageInput } from './messages.js';
import { threadObject, type ThreadObject } from './objects.js';
import type { NewThread, ThreadPatch } from './schemas.js';

export interface ThreadDeps {
  db: Database;
  /** os's check that workspace and collection ids are the tenant's (404 otherwise). */
  checkScope: CheckScope;
  /** Deleting a thread stops the run generating in it first. */
  runs: Pick<RunExecutor, 'cancel'>;
}

/** A thread's create request, checked and ready to insert (insertThread), inside a transaction or not. */
export interface PreparedThread {
  metadata: Record<string, string>;
  grounding: StoredScope | null;
  messages: MessageInput[];
}

/** Checks a create request (400s, and 404 for a workspace or collection that is not the tenant's): no write yet. */
export async function prepareThread(deps: Pick<ThreadDeps, 'checkScope'>, principal: Principal, body: NewThread): Promise<PreparedThread> {
  refuseTools(body);
  const messages = (body.messages ?? []).map((message, i) => messageInputOf(message, `messages[${i}].`));
  const grounding = await scopeOf(deps.checkScope, principal.tenantId, body);
  return { metadata: body.metadata ?? {}, grounding, messages };
}

/** Inserts a prepared thread with its messages, in order (call inside a transaction: all or nothing). */
export async function insertThread(
  q: Queryable,
  principal: Principal,
  prepared: PreparedThread,
): Promise<{ thread: ConversationRow; messages: ItemRow[] }> {
  const thread = await conversationRepository.insert(q, {
    id: newId('thread'),
    tenant_id: principal.tenantId,
    owner: ownerOf(principal),
    surface: 'thread',
    metadata: prepared.metadata,
    grounding: prepared.grounding,
  });
  const messages = await insertMessages(q, thread, prepared.messages);
  return { thread, messages };
}

/** POST /threads: a thread with its first messages, if any. */
export async function createThread(
  deps: Pick<ThreadDeps, 'db' | 'checkScope'>,
  principal: Principal,
  body: NewThread,
): Promise<ThreadObject> {
  const prepared = await prepareThread(deps, principal, body);
  const { thread } = await deps.db.tx((q) => insertThread(q, principal, prepared));
  return threadObject(thread);
}

export async function getThread(deps: Pick<ThreadDeps, 'db'>, principal: Principal, threadId: string): Promise<ThreadObject> {
  return threadObject(await threadRow(deps.db, principal, threadId));
}

/** The thread as it is now, or undefined (an idempotent create's replay). */
export async function findThread(deps: Pick<ThreadDeps, 'db'>, principal: Principal, threadId: string): Promise<ThreadObject | undefined> {
  const row = isId('thread', threadId)
    ? await conversationRepository.get(deps.db, principal.tenantId, ownerOf(principal), 'thread', threadId)
    : undefined;
  return row && threadObject(row);
}

/** GET /threads (our extension): the caller's threads, OpenAI's list shape. */
export async function listThreads(deps: Pick<ThreadDeps, 'db'>, principal: Principal, query: ListQuery): Promise<List<ThreadObject>> {
  const page = pageOf(query, (id) => isId('thread', id));
  const rows = await conversationRepository.listById(deps.db, principal.tenantId, ownerOf(principal), 'thread', page);
  return listOf(rows, page, threadObject);
}

/** POST /threads/{id}: metadata (replaced; null clears it) and the grounding scope (a field left out is kept). */
export async function updateThread(deps: ThreadDeps, principal: Principal, threadId: string, body: ThreadPatch): Promise<ThreadObject> {
  refuseTools(body);
  const current = await threadRow(deps.db, principal, threadId);
  const changesScope = body.workspace_ids !== undefined || body.collection_ids !== undefined;
  const grounding = changesScope ? await scopeOf(deps.checkScope, principal.tenantId, body, current.grounding) : undefined;
  const row = await conversationRepository.update(deps.db, principal.tenantId, ownerOf(principal), 'thread', threadId, {
    ...(body.metadata !== undefined ? { metadata: body.metadata ?? {} } : {}),
    ...(grounding !== undefined ? { grounding } : {}),
  });
  if (!row) throw notFoundWithId('thread', threadId);
  return threadObject(row);
}

/**
 * DELETE /threads/{id}: with its messages and runs (cascade). A run generating in it is
 * stopped first, so no engine keeps working for a thread that is gone.
 */
export async function deleteThread(deps: ThreadDeps, principal: Principal, threadId: string) {
  const thread = await threadRow(deps.db, principal, threadId);
  if (thread.active_run_id) await deps.runs.cancel(thread.active_run_id);
  if (!(await conversationRepository.delete(deps.db, principal.tenantId, ownerOf(principal), 'thread', threadId)))
    throw notFoundWithId('thread', threadId);
  return { id: threadId, object: 'thread.deleted' as const, deleted: true as const };
}
