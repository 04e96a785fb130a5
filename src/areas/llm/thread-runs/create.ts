// Creating a run (POST /threads/{id}/runs, POST /threads/runs): everything is checked
// before anything is written (the assistant is the caller's, the model is known and
// served, the fields are ones we honour); then, in one transaction, the thread is
// locked (or created), its one active run claimed, the added messages appended, and
// the run inserted with its in_progress assistant message. Refused, nothing is
// stored. The run then executes in the background (execute.ts).
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { Queryable } from '../../../platform/db/database.js';
import type { ModelRouter } from '../router/types.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../chat/schemas.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, itemRepository, type ConversationRow, type ItemRow, type StoredScope } from '../history/repository.js';
import { runRepository, type RunParams, type RunRow } from '../runs/repository.js';
import { threadObject } from '../threads/objects.js';
import { executeInBackground, type ExecutionDeps } from './execute.js';
import { runObject } from './objects.js';
import type { RunFeeds } from './feed.js';
import { runAssistantRepository, type RunAssistant } from './repository.js';
import type { CreateRunBody, CreateThreadAndRunBody, MessageInput } from './schemas.js';

export interface CreateRunDeps extends ExecutionDeps {
  router: Pick<ModelRouter, 'resolveModel'>;
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
  if (!isId('thread', threadId)) throw notFound('Thread');
  const asked = await runRequest(deps, caller.principal, body);
  const created = await deps.db.tx(async (q) => {
    const thread = await conversationRepository.lock(q, caller.principal.tenantId, ownerOf(caller.principal), 'thread', threadId);
    if (!thread) throw notFound('Thread');
    if (thread.active_run_id) throw activeRunError(thread.id, thread.active_run_id);
    await appendMessages(q, thread, body.additional_messages ?? []);
    return { thread, ...(await insertRun(q, deps, caller.principal, thread, asked, stream)) };
  });
  return start(deps, caller, created, false);
}

export async function createThreadAndRun(
  deps: CreateRunDeps,
  caller: Caller,
  body: CreateThreadAndRunBody,
  stream: boolean,
): Promise<RunRow> {
  const asked = await runRequest(deps, caller.principal, body);
  const scope = scopeOf(body.thread?.workspace_ids, body.thread?.collection_ids);
  const created = await deps.db.tx(async (q) => {
    const thread = await conversationRepository.insert(q, {
      id: newId('thread'),
      tenant_id: caller.principal.tenantId,
      owner: ownerOf(caller.principal),
      surface: 'thread',
      metadata: body.thread?.metadata ?? {},
      ...(scope ? { grounding: scope } : {}),
    });
    await appendMessages(q, thread, body.thread?.messages ?? []);
    return { thread, ...(await insertRun(q, deps, caller.principal, thread, asked, stream)) };
  });
  return start(deps, caller, created, true);
}

/** The run as asked, checked and with its defaults: the assistant's, then ours. */
interface RunRequest {
  assistant: RunAssistant;
  model: string;
  instructions: string | null;
  params: RunParams;
  /** The run's own scope, when it gave one (else the thread's or the assistant's, found in the transaction). */
  scope: StoredScope | undefined;
  metadata: Record<string, string>;
}

async function runRequest(deps: CreateRunDeps, principal: Principal, body: CreateRunBody): Promise<RunRequest> {
  refuseUnsupported(body);
  if (body.max_tokens != null && body.max_completion_tokens != null && body.max_tokens !== body.max_completion_tokens)
    throw validation('max_tokens', 'must equal max_completion_tokens when both are given (they are the same limit)');
  const assistant = isId('assistant', body.assistant_id)
    ? await runAssistantRepository.get(deps.db, principal.tenantId, ownerOf(principal), body.assistant_id)
    : undefined;
  if (!assistant) throw notFound('Assistant');
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
    scope: scopeOf(body.workspace_ids, body.collection_ids),
    metadata: body.metadata ?? {},
  };
}

/** What OpenAI's runs accept and would change the answer, which we cannot honour: refused by name. */
function refuseUnsupported(body: CreateRunBody): void {
  if (body.tools && body.tools.length > 0) throw validation('tools', 'tools are not supported: runs answer with a message only');
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

/** A scope given in a request: undefined when neither field is; lists left out are empty. */
function scopeOf(workspaceIds: string[] | null | undefined, collectionIds: string[] | null | undefined): StoredScope | undefined {
  if (workspaceIds == null && collectionIds == null) return undefined;
  return { workspaceIds: workspaceIds ?? [], collectionIds: collectionIds ?? [] };
}

/** The thread's messages added by the request, appended as POST messages would. */
async function appendMessages(q: Queryable, thread: ConversationRow, messages: MessageInput[]): Promise<void> {
  for (const message of messages) {
    await itemRepository.append(q, {
      id: newId('message'),
      conversation_id: thread.id,
      tenant_id: thread.tenant_id,
      role: message.role,
      content: textOf(message.content),
      status: 'completed',
      metadata: message.metadata ?? {},
    });
  }
}

const textOf = (content: MessageInput['content']) =>
  typeof content === 'string' ? content : content.map((part) => part.text).join('\n\n');

/** The run, its claim on the thread and its in_progress assistant message (inside the caller's transaction). */
async function insertRun(
  q: Queryable,
  deps: CreateRunDeps,
  principal: Principal,
  thread: ConversationRow,
  asked: RunRequest,
  stream: boolean,
) {
  const runId = newId('run');
  const messageId = newId('message');
  // The run's scope, else the thread's, else the assistant's.
  const scope = asked.scope ?? thread.grounding ?? asked.assistant.grounding ?? undefined;
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
    tenant_id: principal.tenantId,
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
