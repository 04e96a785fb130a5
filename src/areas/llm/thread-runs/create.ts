// Creating a run (POST /threads/{id}/runs, POST /threads/runs): everything is checked
// before anything is written (the assistant is the caller's, the model is known and
// served, the scope is the tenant's, the fields are ones we honour); then, in one
// transaction, the thread is locked (or created), its one active run claimed, the
// added messages appended, and the run inserted with its in_progress assistant
// message. Refused, nothing is stored. The run then executes in the background
// (execute.ts).
import { AppError, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { Queryable } from '../../../platform/db/database.js';
import type { CheckScope } from '../../grounding.js';
import type { ModelRouter } from '../router/types.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../chat/schemas.js';
import { assistantRepository, type AssistantRow } from '../assistants/repository.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, itemRepository, type ConversationRow, type ItemRow, type StoredScope } from '../history/repository.js';
import { runRepository, type RunParams, type RunRow } from '../runs/repository.js';
import { notFoundWithId, refuseTools, scopeOf } from '../threads/fields.js';
import { insertMessages, messageInputOf } from '../threads/messages.js';
import { threadObject } from '../threads/objects.js';
import { threadRow } from '../threads/rows.js';
import { insertThread, prepareThread } from '../threads/service.js';
import { executeInBackground, type ExecutionDeps } from './execute.js';
import type { RunFeeds } from './feed.js';
import { runObject } from './objects.js';
import type { CreateRunBody, CreateThreadAndRunBody } from './schemas.js';

export interface CreateRunDeps extends ExecutionDeps {
  router: Pick<ModelRouter, 'resolveModel'>;
  /** os's check that workspace and collection ids are the tenant's (404 otherwise). */
  checkScope: CheckScope;
  feeds: RunFeeds;
  /** How long a run may take from its creation (GATEWAY_RUN_EXPIRY_SECONDS). */
  runExpirySeconds: number;
}

export interface Caller {
  principal: Principal;
  correlationId: string;
}

/** OpenAI's wording (a 400: a 409 would be retried by the SDK). */
export const activeRunError = (threadId: string, runId: string) =>
  new AppError('BAD_REQUEST', `Thread ${threadId} already has an active run ${runId}.`);

export async function createRun(
  deps: CreateRunDeps,
  caller: Caller,
  threadId: string,
  body: CreateRunBody,
  stream: boolean,
): Promise<RunRow> {
  const { principal } = caller;
  const asked = await runRequest(deps, principal, body);
  const messages = (body.additional_messages ?? []).map((m, i) => messageInputOf(m, `additional_messages[${i}].`));
  const created = await deps.db.tx(async (q) => {
    const thread = await threadRow(q, principal, threadId, true);
    if (thread.active_run_id) throw activeRunError(thread.id, thread.active_run_id);
    await insertMessages(q, thread, messages);
    return { thread, ...(await insertRun(q, deps, thread, asked, stream)) };
  });
  return start(deps, caller, created, false);
}

export async function createThreadAndRun(
  deps: CreateRunDeps,
  caller: Caller,
  body: CreateThreadAndRunBody,
  stream: boolean,
): Promise<RunRow> {
  const { principal } = caller;
  const asked = await runRequest(deps, principal, body);
  const prepared = await prepareThread(deps, principal, body.thread ?? {});
  const created = await deps.db.tx(async (q) => {
    const { thread } = await insertThread(q, principal, prepared);
    return { thread, ...(await insertRun(q, deps, thread, asked, stream)) };
  });
  return start(deps, caller, created, true);
}

/** The run as asked, checked and with its defaults: the assistant's, then ours. */
interface RunRequest {
  assistant: AssistantRow;
  model: string;
  instructions: string | null;
  params: RunParams;
  /** The run's own scope when it gave one (null: none, an empty list asks for no grounding); else undefined. */
  scope: StoredScope | null | undefined;
  metadata: Record<string, string>;
}

async function runRequest(deps: CreateRunDeps, principal: Principal, body: CreateRunBody): Promise<RunRequest> {
  refuseUnsupported(body);
  if (body.max_tokens != null && body.max_completion_tokens != null && body.max_tokens !== body.max_completion_tokens)
    throw validation('max_tokens', 'must equal max_completion_tokens when both are given (they are the same limit)');
  const assistant = isId('assistant', body.assistant_id)
    ? await assistantRepository.get(deps.db, principal.tenantId, ownerOf(principal), body.assistant_id)
    : undefined;
  if (!assistant) throw notFoundWithId('assistant', body.assistant_id);
  // Before anything is stored: an unknown model is a 400, no healthy node a 503.
  const model = await deps.router.resolveModel(principal.tenantId, body.model ?? assistant.model);
  const additional = body.additional_instructions ?? undefined;
  return {
    assistant,
    model,
    instructions: body.instructions ?? assistant.instructions,
    params: {
      max_tokens: body.max_completion_tokens ?? body.max_tokens ?? assistant.max_tokens ?? DEFAULT_MAX_TOKENS,
      temperature: body.temperature ?? assistant.temperature ?? DEFAULT_TEMPERATURE,
      ...(additional ? { additional_instructions: additional } : {}),
    },
    scope:
      body.workspace_ids !== undefined || body.collection_ids !== undefined
        ? await scopeOf(deps.checkScope, principal.tenantId, body)
        : undefined,
    metadata: body.metadata ?? {},
  };
}

/** What OpenAI's runs accept and would change the answer, which we cannot honour: refused by name. */
function refuseUnsupported(body: CreateRunBody): void {
  refuseTools(body);
  const choice = body.tool_choice;
  if (choice != null && choice !== 'none' && choice !== 'auto')
    throw validation('tool_choice', 'only "none" and "auto" are supported (runs have no tools)');
  const format = body.response_format;
  const plainText = format == null || format === 'auto' || (typeof format === 'object' && (format as { type?: unknown }).type === 'text');
  if (!plainText) throw validation('response_format', 'only "auto" (or {"type": "text"}) is supported');
  if (body.top_p != null && body.top_p !== 1) throw validation('top_p', 'is not supported (only 1); use temperature');
  const truncation = body.truncation_strategy as { type?: unknown } | null | undefined;
  if (truncation != null && truncation.type !== 'auto')
    throw validation('truncation_strategy', 'only {"type": "auto"} is supported: the oldest messages are left out first');
  if (body.max_prompt_tokens != null)
    throw validation('max_prompt_tokens', 'is not supported: the prompt is fitted to the context the gateway assumes');
}

/** The run, its claim on the thread and its in_progress assistant message (inside the caller's transaction). */
async function insertRun(q: Queryable, deps: CreateRunDeps, thread: ConversationRow, asked: RunRequest, stream: boolean) {
  const runId = newId('run');
  const messageId = newId('message');
  // The run's scope, else the thread's, else the assistant's.
  const scope = asked.scope !== undefined ? asked.scope : (thread.grounding ?? asked.assistant.grounding);
  const run = await runRepository.insert(q, {
    id: runId,
    tenant_id: thread.tenant_id,
    conversation_id: thread.id,
    owner: thread.owner,
    assistant_id: asked.assistant.id,
    model: asked.model,
    instructions: asked.instructions,
    params: { ...asked.params, ...(scope ? { grounding: scope } : {}), stream },
    metadata: asked.metadata,
    expires_at: new Date(Date.now() + deps.runExpirySeconds * 1000),
    message_id: messageId,
  });
  // Under the thread's lock this cannot lose; checked all the same (the rule must hold without the lock too).
  if (!(await conversationRepository.claimActiveRun(q, thread.id, run.id))) throw activeRunError(thread.id, thread.active_run_id ?? '');
  const item = await itemRepository.append(q, {
    id: messageId,
    conversation_id: thread.id,
    tenant_id: thread.tenant_id,
    role: 'assistant',
    content: '',
    status: 'in_progress',
    run_id: run.id,
    assistant_id: asked.assistant.id,
    model: asked.model,
  });
  return { run, item };
}

/** Opens the run's feed with its first events and sets it going. */
function start(deps: CreateRunDeps, caller: Caller, created: { thread: ConversationRow; run: RunRow; item: ItemRow }, newThread: boolean) {
  const { thread, run, item } = created;
  const feed = deps.feeds.open(run.id);
  if (newThread) feed.emit('thread.created', threadObject(thread));
  feed.emit('thread.run.created', runObject(run));
  feed.emit('thread.run.queued', runObject(run));
  executeInBackground(deps, feed, { run, item, principal: caller.principal, correlationId: caller.correlationId });
  return run;
}
