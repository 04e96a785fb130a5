// One turn of the persisted chat, up to the engine call: the model resolved and the
// grounding scope checked (nothing stored if either fails), then in one transaction
// the user's message, a run and the assistant's message (in_progress) stored and the
// conversation's one active run claimed; then the history the model sees, trimmed to
// the context, grounded when asked. answer.ts hands the turn to the run executor.
//
// History trimming: the context window assumed for models is GATEWAY_RAG_CONTEXT_TOKENS.
// The history may take that less the answer's max_tokens and, when grounding is asked,
// less the room kept for sources (grounding/ground.ts historyBudget);
// history/trim.ts then drops the oldest turns first and always keeps the newest one.
import type { ChatMessage } from '../../../engines/types.js';
import { AppError, notFound } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { RetrievalResult } from '../../grounding.js';
import { groundWith, historyBudget, retrieveFor, wantsGrounding, type Grounding } from '../grounding/ground.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, itemRepository } from '../history/repository.js';
import { windowOf } from '../history/trim.js';
import { runRepository } from '../runs/repository.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../chat/schemas.js';
import type { ChatBody } from './schemas.js';
import type { ConversationDeps } from './service.js';
import { titleFrom } from './title.js';

export interface Turn {
  principal: Principal;
  correlationId: string;
  conversationId: string;
  runId: string;
  /** The assistant message the answer goes into. */
  messageId: string;
  /** When the assistant message was stored (the answer's createdAt). */
  createdAt: Date;
  model: string;
  maxTokens: number;
  temperature: number;
  stream: boolean;
  /** What the engine sees: the trimmed history, with sources when grounded. */
  messages: ChatMessage[];
  /** Set when grounding was asked (stored with the assistant message). */
  grounding?: Grounding;
}

export const CONFLICT_DETAIL = 'A reply in this conversation is still being generated. Wait for it to finish, then send the next message.';

/** Prepares the turn of a signed-in user (requireChatUser first). Throws the 4xx/503 that leave nothing stored. */
export async function beginTurn(deps: ConversationDeps, principal: Principal, correlationId: string, body: ChatBody): Promise<Turn> {
  // Another kind of id (a thread's) is no conversation of this API: the same 404 as an unknown one.
  if (body.conversationId !== undefined && !isId('conversation', body.conversationId)) throw notFound('Conversation');
  const maxTokens = body.max_tokens ?? DEFAULT_MAX_TOKENS;
  const temperature = body.temperature ?? DEFAULT_TEMPERATURE;
  const model = await resolveModel(deps, principal, correlationId, body);
  // Retrieval first: an id that is not the tenant's is its 404, before anything is stored.
  const retrieval = wantsGrounding(body) ? await retrieveFor(deps.grounding, principal.tenantId, body, body.message) : undefined;

  const stored = await deps.db.tx(async (q) => {
    const owner = ownerOf(principal);
    const conversation = body.conversationId
      ? await conversationRepository.lock(q, principal.tenantId, owner, 'chat', body.conversationId)
      : await conversationRepository.insert(q, {
          id: newId('conversation'),
          tenant_id: principal.tenantId,
          owner,
          surface: 'chat',
          title: titleFrom(body.message),
        });
    if (!conversation) throw notFound('Conversation');
    const runId = newId('run');
    // One reply at a time: a second turn while one is generating is refused (the transaction rolls back: nothing stored).
    if (!(await conversationRepository.claimActiveRun(q, conversation.id, runId))) throw new AppError('CONFLICT', CONFLICT_DETAIL);
    await runRepository.insert(q, {
      id: runId,
      tenant_id: principal.tenantId,
      conversation_id: conversation.id,
      owner,
      model,
      params: {
        max_tokens: maxTokens,
        temperature,
        stream: body.stream === true,
        ...(retrieval ? { grounding: { workspaceIds: body.workspaceIds, collectionIds: body.collectionIds } } : {}),
      },
    });
    const item = { conversation_id: conversation.id, tenant_id: principal.tenantId };
    await itemRepository.append(q, { ...item, id: newId('message'), role: 'user', content: body.message, status: 'completed' });
    const answer = await itemRepository.append(q, {
      ...item,
      id: newId('message'),
      role: 'assistant',
      content: '',
      status: 'in_progress',
      run_id: runId,
      model,
    });
    await runRepository.setMessage(q, runId, answer.id);
    return { conversationId: conversation.id, runId, messageId: answer.id, createdAt: answer.created_at };
  });

  const turn: Turn = {
    principal,
    correlationId,
    ...stored,
    model,
    maxTokens,
    temperature,
    stream: body.stream === true,
    messages: [],
  };
  try {
    await seeHistory(deps, turn, retrieval);
  } catch (error) {
    // Stored, but never to be generated: ended now, so the conversation takes turns again.
    await abandon(deps, turn);
    throw error;
  }
  return turn;
}

/** The messages the model sees: the history within the budget, grounded with what retrieval found. */
async function seeHistory(deps: ConversationDeps, turn: Turn, retrieval: RetrievalResult | undefined): Promise<void> {
  const budgetTokens = historyBudget(deps.grounding.contextTokens, turn.maxTokens, retrieval !== undefined);
  const history = await windowOf(deps.db, turn.principal.tenantId, turn.conversationId, { budgetTokens });
  if (!retrieval) {
    turn.messages = history;
    return;
  }
  const grounded = await groundWith(deps.grounding, retrieval, history, turn.maxTokens);
  turn.messages = grounded.messages;
  turn.grounding = grounded.grounding;
}

async function resolveModel(deps: ConversationDeps, principal: Principal, correlationId: string, body: ChatBody): Promise<string> {
  const requested = body.model ?? 'auto';
  try {
    return await deps.router.resolveModel(principal.tenantId, requested);
  } catch (error) {
    // An unknown model (400) is the caller's mistake, not usage; no healthy node (503) is recorded, as chat/completions does.
    if (error instanceof AppError && error.status === 503) {
      deps.usage.record({
        tenantId: principal.tenantId,
        principalKind: principal.kind,
        principalId: principal.subject,
        customerId: principal.customerId,
        endpoint: 'chat',
        model: requested,
        nodeId: null,
        stream: body.stream === true,
        promptTokens: 0,
        completionTokens: 0,
        latencyMs: 0,
        status: 'unavailable',
        correlationId,
      });
    }
    throw error;
  }
}

const NOT_PREPARED = 'The reply could not be prepared; nothing was generated. Send the message again.';

/** Ends a stored turn that will not be generated: its message incomplete, its run failed, the conversation free. */
async function abandon(deps: ConversationDeps, turn: Turn): Promise<void> {
  await deps.db.tx(async (q) => {
    await itemRepository.finish(q, turn.messageId, { content: '', status: 'incomplete', incompleteReason: 'run_failed' });
    await runRepository.finish(q, turn.runId, { status: 'failed', lastError: { code: 'server_error', message: NOT_PREPARED } });
    await conversationRepository.releaseActiveRun(q, turn.conversationId, turn.runId);
  });
}
