// Creating a response, up to the engine call: every field is checked, the model
// resolved and the grounding scope checked before anything is stored; then, in one
// transaction, the conversation it builds on is chosen (below), its one active run
// claimed, the input items appended and the run (id `resp_…`) inserted with its
// in_progress output item. Then the history the model sees: the instructions, as
// much of the conversation as fits (oldest dropped first), grounded when asked.
//
// Which conversation:
// - `previous_response_id`: that response's conversation, continued in place when the
//   response is its newest turn and nothing is generating there; otherwise (a second
//   answer to the same response, or one still generating next to it, or tools or
//   images after a response in a persisted chat) a branch: a new conversation
//   starting with a copy of the items up to that response's output;
// - `conversation`: the caller's persisted chat conversation (conv_…, a person's own:
//   API keys have none), continued in place; text messages only, no tools;
// - neither: a new conversation of its own.
// With `store: false` the response is always generated in a conversation of its own
// (a copy when it continues one), deleted once the answer is out.
import { AppError, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { Queryable } from '../../../platform/db/database.js';
import type { ChatMessage, ToolCall } from '../../../engines/types.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../chat/schemas.js';
import { ground, historyBudget, type Grounding } from '../grounding/ground.js';
import { ownerOf } from '../history/owner.js';
import { conversationRepository, itemRepository, type ConversationRow, type StoredScope } from '../history/repository.js';
import { windowOf } from '../history/trim.js';
import { OPEN_STATUSES, runRepository } from '../runs/repository.js';
import { scopeOf } from '../threads/fields.js';
import { hasScope } from '../thread-runs/execute.js';
import { inputDrafts, type InputDraft } from './input.js';
import { listItemId, storedMcp, type StoredMcpItem } from './mcp-items.js';
import { engineToolsOf, planMcp, type McpPlan, type McpServerPlan } from './mcp-tools.js';
import { optionsOf, type AskedOptions } from './options.js';
import { responseRepository, type ResponseParams, type ResponseRow } from './repository.js';
import type { CreateResponseBody } from './schemas.js';
import type { ResponseDeps } from './service.js';

/** A stored response ready to generate. */
export interface Prepared {
  principal: Principal;
  correlationId: string;
  run: ResponseRow;
  messageId: string;
  /** Delete everything once answered (`store: false`). */
  ephemeral: boolean;
  options: AskedOptions;
  messages: ChatMessage[];
  grounding?: Grounding;
  /** The mcp tools resolved (mcp-run.ts runs the response in steps when there are any). */
  mcp?: McpPlan;
  /** The previous response's approval requests this one answers (mcp_approval_response items). */
  approvals: Approval[];
}

export interface Approval {
  request: StoredMcpItem & { item: NonNullable<StoredMcpItem['item']>; call: ToolCall; server: string; tool: string };
  server: McpServerPlan;
  approve: boolean;
  reason: string | null;
}

/** OpenAI's wording for an id that is not the caller's. */
export const responseNotFound = (id: string) => new AppError('NOT_FOUND', `Response with id '${id}' not found.`);
export const previousNotFound = (id: string) =>
  new AppError('NOT_FOUND', `Previous response with id '${id}' not found.`, {
    errors: [{ field: 'previous_response_id', message: 'not found' }],
  });
const conversationNotFound = (id: string) =>
  new AppError('NOT_FOUND', `Conversation with id '${id}' not found.`, { errors: [{ field: 'conversation', message: 'not found' }] });

export async function prepareResponse(
  deps: ResponseDeps,
  principal: Principal,
  correlationId: string,
  body: CreateResponseBody,
): Promise<Prepared> {
  const drafts = inputDrafts(body.input);
  const options = optionsOf(body);
  const previousId = body.previous_response_id ?? undefined;
  const conversationId =
    typeof body.conversation === 'object' && body.conversation ? body.conversation.id : (body.conversation ?? undefined);
  if (previousId !== undefined && conversationId !== undefined)
    throw validation('conversation', 'cannot be given with previous_response_id: continue one or the other');
  if (conversationId !== undefined && (options.asked.length > 0 || drafts.some((d) => d.payload)))
    throw validation('conversation', 'a persisted chat conversation holds text messages only: no tools, function call items or images');
  if (conversationId !== undefined && drafts.some((d) => d.role === 'developer'))
    throw validation('conversation', 'a persisted chat conversation holds no developer messages: use instructions');
  const maxTokens = body.max_output_tokens ?? DEFAULT_MAX_TOKENS;
  const temperature = body.temperature ?? DEFAULT_TEMPERATURE;
  // Before anything is stored: an unknown model is a 400, no healthy node a 503; a scope id not the tenant's a 404.
  const model = await deps.router.resolveModel(principal.tenantId, body.model ?? 'auto');
  const scope =
    body.workspace_ids !== undefined || body.collection_ids !== undefined
      ? await scopeOf(deps.checkScope, principal.tenantId, body)
      : undefined;
  const ephemeral = body.store === false;
  // The mcp tools' servers and tools, listed now: a server the caller may not use is a 400 before anything is stored.
  const mcp = options.mcp.length
    ? await planMcp(deps.mcpTools(), principal, options.mcp, new Set(options.tools.map((t) => t.name)))
    : undefined;
  if (mcp?.byName.size) options.engine = { ...options.engine, tools: [...(options.engine?.tools ?? []), ...engineToolsOf(mcp)] };
  const approvals = await approvalsOf(deps, principal, drafts, previousId, mcp);
  const params: ResponseParams = {
    max_tokens: maxTokens,
    temperature,
    stream: body.stream === true,
    ...(scope ? { grounding: scope } : {}),
    ...(options.asked.length ? { tools: options.asked } : {}),
    tool_choice: options.toolChoice,
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    format: options.format,
    ...(body.user !== undefined ? { user: body.user } : {}),
    ...(previousId ? { previous_response_id: previousId } : {}),
    ...(conversationId ? { conversation: conversationId } : {}),
    ...(ephemeral ? { store: false } : {}),
  };
  const owner = ownerOf(principal);
  const stored = await deps.db.tx(async (q) => {
    const richer = options.asked.length > 0 || drafts.some((d) => d.payload || d.role === 'developer');
    const conversation = await conversationFor(q, principal.tenantId, owner, { previousId, conversationId, ephemeral, richer });
    const runId = newId('response');
    if (!(await conversationRepository.claimActiveRun(q, conversation.id, runId)))
      throw validation('conversation', `another response is being generated in conversation ${conversation.id}: wait for it to finish`);
    const run = (await runRepository.insert(q, {
      id: runId,
      tenant_id: principal.tenantId,
      conversation_id: conversation.id,
      owner,
      model,
      instructions: body.instructions ?? null,
      params,
      metadata: body.metadata ?? {},
    })) as ResponseRow;
    await appendInputs(q, conversation, runId, drafts);
    for (const server of mcp?.servers ?? []) await appendListing(q, conversation, runId, server);
    const answer = await itemRepository.append(q, {
      id: newId('message'),
      conversation_id: conversation.id,
      tenant_id: principal.tenantId,
      role: 'assistant',
      content: '',
      status: 'in_progress',
      run_id: runId,
      model,
    });
    await runRepository.setMessage(q, runId, answer.id);
    return { run: { ...run, message_id: answer.id }, messageId: answer.id };
  });
  const prepared: Prepared = {
    principal,
    correlationId,
    ...stored,
    ephemeral,
    options,
    messages: [],
    ...(mcp ? { mcp } : {}),
    approvals,
  };
  try {
    await seeHistory(deps, prepared, scope ?? null);
  } catch (error) {
    await abandon(deps, prepared);
    throw error;
  }
  return prepared;
}

interface Continuing {
  previousId: string | undefined;
  conversationId: string | undefined;
  ephemeral: boolean;
  /** Tools, function call items, images or developer messages: more than a persisted chat holds. */
  richer: boolean;
}

/** The conversation the response is generated in (locked), per the rules at the top. */
async function conversationFor(q: Queryable, tenantId: string, owner: string, asked: Continuing): Promise<ConversationRow> {
  const fresh = () => conversationRepository.insert(q, { id: newId('conversation'), tenant_id: tenantId, owner, surface: 'response' });
  if (asked.previousId !== undefined) {
    const previous = isId('response', asked.previousId) ? await responseRepository.find(q, tenantId, owner, asked.previousId) : undefined;
    if (!previous) throw previousNotFound(asked.previousId);
    if (OPEN_STATUSES.includes(previous.status))
      throw validation('previous_response_id', `response ${previous.id} is still being generated: wait for it to finish`);
    const conversation =
      (await conversationRepository.lock(q, tenantId, owner, 'response', previous.conversation_id)) ??
      (await conversationRepository.lock(q, tenantId, owner, 'chat', previous.conversation_id));
    const output = previous.message_id ? await itemRepository.byId(q, previous.message_id) : undefined;
    if (!conversation || !output) throw previousNotFound(asked.previousId);
    // A persisted chat (a response made with `conversation`) takes text turns only: anything richer branches off.
    const inPlace =
      !asked.ephemeral &&
      !(asked.richer && conversation.surface === 'chat') &&
      conversation.active_run_id === null &&
      !(await responseRepository.hasItemsAfter(q, conversation.id, output.position));
    if (inPlace) return conversation;
    const branch = await fresh();
    await responseRepository.copyItems(q, tenantId, conversation.id, branch.id, output.position);
    return branch;
  }
  if (asked.conversationId !== undefined) {
    const conversation = isId('conversation', asked.conversationId)
      ? await conversationRepository.lock(q, tenantId, owner, 'chat', asked.conversationId)
      : undefined;
    if (!conversation) throw conversationNotFound(asked.conversationId);
    if (!asked.ephemeral) return conversation;
    const copy = await fresh();
    await responseRepository.copyItems(q, tenantId, conversation.id, copy.id, conversation.item_count);
    return copy;
  }
  return fresh();
}

async function appendInputs(q: Queryable, conversation: ConversationRow, runId: string, drafts: InputDraft[]): Promise<void> {
  for (const draft of drafts)
    await itemRepository.append(q, {
      id: newId('message'),
      conversation_id: conversation.id,
      tenant_id: conversation.tenant_id,
      role: draft.role,
      content: draft.content,
      status: 'completed',
      run_id: runId,
      ...(draft.payload ? { payload: draft.payload } : {}),
    });
}

/** The mcp_list_tools item of one server: an item of the run the model never sees (no text, no calls). */
async function appendListing(q: Queryable, conversation: ConversationRow, runId: string, server: McpServerPlan): Promise<void> {
  const id = newId('message');
  const tools = [...server.tools].map(([name, tool]) => ({
    name,
    description: tool.definition.description ?? null,
    input_schema: tool.definition.inputSchema,
    annotations: tool.definition.annotations ?? null,
  }));
  const item: StoredMcpItem = { item: { id: listItemId(id), type: 'mcp_list_tools', server_label: server.label, tools, error: null } };
  await itemRepository.append(q, {
    id,
    conversation_id: conversation.id,
    tenant_id: conversation.tenant_id,
    role: 'assistant',
    content: '',
    status: 'completed',
    run_id: runId,
    payload: { mcp: [item] },
  });
}

/**
 * The approval requests the input answers: each must be one of the previous response's
 * (OpenAI's 400 otherwise), and its tool offered by this request's mcp tools.
 */
async function approvalsOf(
  deps: ResponseDeps,
  principal: Principal,
  drafts: InputDraft[],
  previousId: string | undefined,
  mcp: McpPlan | undefined,
): Promise<Approval[]> {
  const answers = drafts.flatMap((d, i) => (d.payload?.mcp_approval ? [{ answer: d.payload.mcp_approval, at: `input[${i}]` }] : []));
  if (answers.length === 0) return [];
  if (previousId === undefined)
    throw validation(
      `${answers[0]!.at}.approval_request_id`,
      'answers an approval request of the previous response: give previous_response_id',
    );
  const previous = isId('response', previousId)
    ? await responseRepository.find(deps.db, principal.tenantId, ownerOf(principal), previousId)
    : undefined;
  if (!previous) throw previousNotFound(previousId);
  const requests = (await responseRepository.outputItems(deps.db, previous)).flatMap((row) => storedMcp(row));
  const seen = new Set<string>();
  return answers.map(({ answer, at }) => {
    const field = `${at}.approval_request_id`;
    const request = requests.find((r) => r.item?.type === 'mcp_approval_request' && r.item.id === answer.approval_request_id);
    if (!request?.item || !request.call || !request.server || !request.tool)
      throw validation(field, `is not an approval request of response ${previousId}`);
    if (seen.has(answer.approval_request_id)) throw validation(field, 'is answered twice');
    seen.add(answer.approval_request_id);
    const offered = mcp?.byName.get(request.call.function.name);
    if (!offered || offered.server.label !== request.item.server_label || offered.tool.name !== request.tool)
      throw validation(field, `its tool ${request.item.server_label}/${request.tool} is not offered by this request's mcp tools`);
    return { request: request as Approval['request'], server: offered.server, approve: answer.approve, reason: answer.reason ?? null };
  });
}

/** The history again, after a step of an MCP response added to it (mcp-run.ts). */
export const seeHistoryAgain = (deps: ResponseDeps, prepared: Prepared) =>
  seeHistory(deps, prepared, prepared.run.params.grounding ?? null);

/** The messages the model sees: the instructions, the conversation within the budget, grounded when the response has a scope. */
async function seeHistory(deps: ResponseDeps, prepared: Prepared, scope: StoredScope | null): Promise<void> {
  const { run } = prepared;
  const maxTokens = run.params.max_tokens ?? DEFAULT_MAX_TOKENS;
  const grounded = hasScope(scope);
  const budgetTokens = historyBudget(deps.grounding.contextTokens, maxTokens, grounded);
  const system = run.instructions?.trim() ? run.instructions : undefined;
  const messages = await windowOf(deps.db, run.tenant_id, run.conversation_id, { ...(system ? { system } : {}), budgetTokens });
  if (!grounded || !messages.some((m) => m.role === 'user')) {
    prepared.messages = messages;
    return;
  }
  const result = await ground(deps.grounding, run.tenant_id, scope!, messages, maxTokens);
  prepared.messages = result.messages;
  prepared.grounding = result.grounding;
}

const NOT_PREPARED = 'The response could not be prepared; nothing was generated.';

/** Ends a stored response that will not be generated: failed, its conversation free (deleted when not to be stored). */
async function abandon(deps: ResponseDeps, prepared: Prepared): Promise<void> {
  await deps.db.tx(async (q) => {
    await itemRepository.finish(q, prepared.messageId, { content: '', status: 'incomplete', incompleteReason: 'run_failed' });
    await runRepository.finish(q, prepared.run.id, { status: 'failed', lastError: { code: 'server_error', message: NOT_PREPARED } });
    await conversationRepository.releaseActiveRun(q, prepared.run.conversation_id, prepared.run.id);
    if (prepared.ephemeral) await forget(q, prepared);
  });
}

/** `store: false`: the response's own conversation goes, with its items and run. */
export async function forget(q: Queryable, prepared: Prepared): Promise<void> {
  const { run } = prepared;
  await conversationRepository.delete(q, run.tenant_id, run.owner, 'response', run.conversation_id);
}
