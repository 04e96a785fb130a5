// The conversations a signed-in person keeps through `POST /chat`: list, read with
// messages, rename, delete. Every read goes through the owner rule (history/owner.ts):
// another person's conversation, a tenant admin's view of a member's included, is a
// 404 exactly like an unknown id; API keys are refused (403) before anything is read.
import type { Database } from '../../../platform/db/database.js';
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { isId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { requireUser } from '../../../platform/authorization.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { GroundingDeps } from '../grounding/ground.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, itemRepository, type ConversationRow } from '../history/repository.js';
import type { ModelRouter } from '../router/types.js';
import type { RunExecutor } from '../runs/executor.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { containsPattern, pageFrom, pageLimit, type ListQuery } from '../../paging.js';
import { toConversation, toMessage } from './records.js';
import {
  PAGE_MAX,
  type Conversation,
  type ConversationPage,
  type ConversationPatch,
  type ConversationWithMessages,
  type PageQuery,
} from './schemas.js';

export interface ConversationDeps {
  db: Database;
  router: ModelRouter;
  usage: UsageRecorder;
  /** Generates each turn's answer and stores it (runs/executor.ts). */
  runs: Pick<RunExecutor, 'execute' | 'cancel'>;
  /** Counts each turn while it runs, so that a shutdown can stop it cleanly. */
  calls: OpenCalls;
  heartbeatMs: number;
  /** Retry-After for 503s the engines cause. */
  retryAfterSeconds: number;
  /** Retrieval, and the context window assumed for models (GATEWAY_RAG_CONTEXT_TOKENS), which also bounds the history sent. */
  grounding: GroundingDeps;
}

const CONVERSATIONS_DEFAULT = 20;
// A conversation's page of messages: most conversations are read whole in one.
const MESSAGES_DEFAULT = 100;

/** GET /conversations: a page of the caller's conversations, newest activity first; `next` is the last one's id. */
export async function listConversations(deps: ConversationDeps, principal: Principal, query: ListQuery): Promise<ConversationPage> {
  requireUser(principal);
  const limit = pageLimit(query.limit, { fallback: CONVERSATIONS_DEFAULT, max: PAGE_MAX })!;
  const owner = ownerOf(principal);
  // The cursor is the last conversation of the previous page, checked here under the owner
  // rule, so a cursor cannot be forged to page from anything else.
  if (query.after !== undefined) {
    const known =
      isId('conversation', query.after) && (await conversationRepository.get(deps.db, principal.tenantId, owner, 'chat', query.after));
    if (!known) throw validation('after', "must be a conversation id of yours (a page's next)");
  }
  const pattern = containsPattern(query.q);
  const [rows, total] = await Promise.all([
    conversationRepository.listByActivity(deps.db, principal.tenantId, owner, limit + 1, query.after, pattern),
    conversationRepository.countChats(deps.db, principal.tenantId, owner, pattern),
  ]);
  return pageFrom(rows, limit, total, toConversation, (row) => row.id);
}

export async function getConversation(
  deps: ConversationDeps,
  principal: Principal,
  id: string,
  query: PageQuery,
): Promise<ConversationWithMessages> {
  const row = await ownConversation(deps.db, principal, id);
  const limit = pageLimit(query.limit, { fallback: MESSAGES_DEFAULT, max: PAGE_MAX })!;
  if (query.after !== undefined) {
    const known = isId('message', query.after) && (await itemRepository.get(deps.db, principal.tenantId, row.id, query.after));
    if (!known) throw validation('after', "must be a message id of this conversation (a page's next)");
  }
  const items = await itemRepository.list(deps.db, principal.tenantId, row.id, { limit: limit + 1, order: 'asc', after: query.after });
  const page = items.slice(0, limit);
  return {
    ...toConversation(row),
    messages: { data: page.map(toMessage), next: items.length > limit ? page[page.length - 1]!.id : null },
  };
}

export async function renameConversation(
  deps: ConversationDeps,
  principal: Principal,
  id: string,
  patch: ConversationPatch,
): Promise<Conversation> {
  requireUser(principal);
  const row = isId('conversation', id)
    ? await conversationRepository.update(deps.db, principal.tenantId, ownerOf(principal), 'chat', id, { title: patch.title })
    : undefined;
  if (!row) throw notFound('Conversation');
  return toConversation(row);
}

/** Deletes the conversation with its messages and runs; a reply still being generated for it is stopped. */
export async function deleteConversation(deps: ConversationDeps, principal: Principal, id: string): Promise<void> {
  const row = await ownConversation(deps.db, principal, id);
  if (!(await conversationRepository.delete(deps.db, principal.tenantId, row.owner, 'chat', row.id))) throw notFound('Conversation');
  if (row.active_run_id) await deps.runs.cancel(row.active_run_id);
}

/** The caller's own chat conversation, or the 404 every other case gets (unknown, another person's or tenant's, a thread). */
export async function ownConversation(db: Database, principal: Principal, id: string): Promise<ConversationRow> {
  requireUser(principal);
  const row = isId('conversation', id)
    ? await conversationRepository.get(db, principal.tenantId, ownerOf(principal), 'chat', id)
    : undefined;
  if (!row) throw notFound('Conversation');
  return row;
}

/**
 * Spec rule 3: the persisted chat keeps a person's conversation, so a credential with
 * a tenant but no user (every API key) is refused with a 500, before anything is read
 * or stored. The detail names the way that works for it.
 */
export function requireChatUser(principal: Principal): Principal {
  if (principal.kind === 'user') return principal;
  throw new AppError(
    'USER_IDENTITY_REQUIRED',
    'POST /api/llm/v1/chat keeps conversations for a signed-in user, and this credential has no user (API keys never do). ' +
      'Use POST /api/llm/v1/chat/completions and keep the transcript in your application.',
  );
}
