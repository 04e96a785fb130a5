// The caller's thread row, as every thread, message and run route finds it first.
import type { Queryable } from '../../../platform/db/database.js';
import type { Principal } from '../../../platform/identity.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, type ConversationRow } from '../history/repository.js';
import { notFoundWithId, requireIdShape } from './fields.js';

/**
 * The caller's thread, or OpenAI's 404 (an id not shaped like a thread's costs no
 * query). `lock`: held until the transaction ends (appends, run starts: the
 * one-active-run check and what it guards happen under it).
 */
export async function threadRow(q: Queryable, principal: Principal, threadId: string, lock = false): Promise<ConversationRow> {
  requireIdShape('thread', threadId);
  const read = lock ? conversationRepository.lock : conversationRepository.get;
  const row = await read(q, principal.tenantId, ownerOf(principal), 'thread', threadId);
  if (!row) throw notFoundWithId('thread', threadId);
  return row;
}
