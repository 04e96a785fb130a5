// A response with mcp tools, generated in steps: the caller's answered approvals run
// first; then the model takes a turn (the run executor, as for any response); when it
// calls MCP tools, each call runs through the ToolSource (the registry re-checks
// tenant, grant and pin; the server's own credential goes upstream), is one audit
// record like the MCP endpoint's, and its result goes into the conversation; then the
// run is queued again for the model's next turn. It ends when the model answers without
// an MCP call, calls a function tool (the caller's to run), makes a call that needs
// approval (mcp_approval_request items; the response completes and waits for the next
// request's mcp_approval_response), or after MAX_MCP_STEPS turns: then the last turn's
// calls have run, their results are kept, and the response is `incomplete` with
// reason `max_tool_calls` (a next request with previous_response_id goes on from there).
//
// Between turns the executor has ended the run `completed` and it is queued again at
// once (reopen); a request continuing it in that instant finds the conversation taken.
// A stream opens at once (its listings come first), so a model that fails before its
// first turn is `response.failed` rather than an HTTP error.
import type { FastifyReply } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolCall } from '../../../engines/types.js';
import { newId } from '../../../platform/ids.js';
import type { ClientWatch } from '../calls/client-watch.js';
import { conversationRepository, itemRepository } from '../history/repository.js';
import { failedCallStatus, recordCall } from '../mcp/calls/audit.js';
import type { McpCallStatus } from '../mcp/calls/schemas.js';
import { ToolCallFailed, type GrantedTool } from '../mcp/tool-source.js';
import type { Outcome } from '../runs/executor.js';
import { runRepository } from '../runs/repository.js';
import { RunStream } from '../runs/run-stream.js';
import { failureBeforeAnswer, generationOf } from './answer.js';
import { forget, seeHistoryAgain, type Approval, type Prepared } from './create.js';
import { ResponseEvents } from './events.js';
import { approvalRequestId, mcpCallId, mcpOutputOf, modelSees, resultText, storedMcp, type StoredMcpItem } from './mcp-items.js';
import { MAX_MCP_STEPS } from './mcp-tools.js';
import { responseObject } from './objects.js';
import { responseRepository } from './repository.js';
import type { McpCallItem, ResponseObject } from './schemas.js';
import type { ResponseDeps } from './service.js';

interface Io {
  client: ClientWatch;
  events?: ResponseEvents;
  stream?: RunStream;
  /** Aborts with the client: the tool calls' signal. */
  signal: AbortSignal;
}

export async function answerMcp(deps: ResponseDeps, prepared: Prepared, reply: FastifyReply): Promise<ResponseObject | undefined> {
  const client = deps.calls.watch(reply.raw);
  const plan = prepared.mcp!;
  const streaming = prepared.run.params.stream === true;
  const events = streaming ? new ResponseEvents(prepared.messageId, (name) => plan.byName.has(name)) : undefined;
  const stream = events
    ? new RunStream(reply, client, deps.heartbeatMs, (sse) =>
        sse.write(events.start(responseObject({ ...prepared.run, status: 'in_progress' }, undefined, []))),
      )
    : undefined;
  // The client watch's signal is not one AbortSignal.any follows (runs/executor.ts): a controller of our own follows it.
  const gone = new AbortController();
  const follow = () => gone.abort(client.signal.reason);
  if (client.signal.aborted) follow();
  else client.signal.addEventListener('abort', follow, { once: true });
  const io: Io = { client, signal: gone.signal, ...(events ? { events } : {}), ...(stream ? { stream } : {}) };
  try {
    await stream?.open();
    if (events) for (const row of await responseRepository.outputItems(deps.db, prepared.run)) writeListing(io, storedMcp(row));
    if (prepared.approvals.length) await answerApprovals(deps, prepared, io);
    const { outcome, closed, incomplete, usage } = await steps(deps, prepared, io);
    const run = await deps.db.tx((q) => responseRepository.endSteps(q, prepared.run.id, usage, incomplete));
    const item = await itemRepository.byId(deps.db, prepared.messageId);
    const rows = await responseRepository.outputItems(deps.db, { ...prepared.run, message_id: prepared.messageId });
    const object = responseObject({ ...prepared.run, ...run, params: prepared.run.params }, item, mcpOutputOf(rows, prepared.messageId));
    if (prepared.ephemeral) await deps.db.tx((q) => forget(q, prepared));
    if (stream) {
      const sse = await stream.settle(outcome, () => failureBeforeAnswer(deps, outcome));
      sse?.end(closed ? events!.close(object) : events!.finish(item, object));
      return undefined;
    }
    if (client.gone()) {
      reply.hijack();
      return undefined;
    }
    const failure = failureBeforeAnswer(deps, outcome);
    if (failure && rows.length === 1) throw failure;
    return object;
  } finally {
    client.signal.removeEventListener('abort', follow);
    client.dispose();
  }
}

function writeListing(io: Io, stored: StoredMcpItem[]): void {
  for (const { item } of stored) {
    if (item?.type !== 'mcp_list_tools') continue;
    io.stream?.sse?.write(
      io.events!.mcpItem({ ...item, tools: [] }, [['response.mcp_list_tools.in_progress'], ['response.mcp_list_tools.completed']], item),
    );
  }
}

/** The model's turns, until one ends the response; the turn's items are closed (`closed`) unless it was an answer. */
async function steps(deps: ResponseDeps, prepared: Prepared, io: Io) {
  const plan = prepared.mcp!;
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const write = (frames: string) => io.stream?.sse?.write(frames);
  for (let step = 1; ; step++) {
    const outcome: Outcome = await deps.runs.execute({
      ...generationOf(prepared, io.client),
      ...(io.stream ? { onAccepted: io.stream.open } : {}),
      ...(io.events
        ? { onDelta: (text: string) => write(io.events!.delta(text)), onToolCall: (piece) => write(io.events!.toolCall(piece)) }
        : {}),
    });
    const spent = outcome.run?.usage;
    if (spent) for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const) usage[k] += spent[k];
    const calls = outcome.toolCalls ?? [];
    const mcpCalls = calls.filter((call) => plan.byName.has(call.function.name));
    if (outcome.run?.status !== 'completed' || !outcome.item || mcpCalls.length === 0) return { outcome, closed: false, usage };

    const turn = outcome.item;
    // Decided before any call runs, so that the turn's function calls close first (the MCP ones are items of their own).
    const approvals = new Set(mcpCalls.filter((call) => needsApproval(prepared, call)).map((call) => call.id));
    const stored: StoredMcpItem[] = mcpCalls.map((call) => ({ call_id: call.id }) as StoredMcpItem);
    if (io.events) write(io.events.closeTurn({ ...turn, payload: { ...turn.payload, mcp: stored } }, false));
    const results: { call: ToolCall; item: McpCallItem }[] = [];
    for (const [i, call] of mcpCalls.entries()) {
      const { server, tool } = plan.byName.get(call.function.name)!;
      if (approvals.has(call.id)) {
        const request = {
          id: approvalRequestId(turn.id, i),
          type: 'mcp_approval_request' as const,
          server_label: server.label,
          name: tool.name,
          arguments: call.function.arguments,
        };
        if (io.events) write(io.events.mcpItem(request, [], request));
        stored[i] = { item: request, call_id: call.id, call, server: tool.server, tool: tool.name };
        continue;
      }
      const item = await runCall(deps, prepared, io, { tool, label: server.label, call, id: mcpCallId(turn.id, i) });
      stored[i] = { item, call_id: call.id };
      results.push({ call, item });
    }
    const last = approvals.size > 0 || calls.length > mcpCalls.length || step >= MAX_MCP_STEPS || io.client.gone();
    const incomplete = approvals.size === 0 && calls.length === mcpCalls.length && step >= MAX_MCP_STEPS ? 'max_tool_calls' : undefined;
    const next = await deps.db.tx(async (q) => {
      await responseRepository.setTurnCalls(
        q,
        turn.id,
        calls.filter((call) => !approvals.has(call.id)),
        stored,
      );
      for (const { call, item } of results) await appendResult(q, prepared, call, item);
      if (last) return undefined;
      if (!(await responseRepository.reopen(q, prepared.run.id))) return undefined;
      if (!(await conversationRepository.claimActiveRun(q, prepared.run.conversation_id, prepared.run.id))) {
        // Someone continued the response in the instant it stood completed: it ends here, as it stands.
        await runRepository.finish(q, prepared.run.id, { status: 'completed' });
        return undefined;
      }
      const answer = await appendAnswer(q, prepared);
      await runRepository.setMessage(q, prepared.run.id, answer);
      return answer;
    });
    if (!next) return { outcome, closed: true, usage, ...(incomplete ? { incomplete } : {}) };
    prepared.messageId = next;
    prepared.run = { ...prepared.run, message_id: next };
    io.events?.nextTurn(next);
    await seeHistoryAgain(deps, prepared);
  }
}

function needsApproval(prepared: Prepared, call: ToolCall): boolean {
  const offered = prepared.mcp!.byName.get(call.function.name)!;
  return offered.server.needsApproval(offered.tool);
}

/**
 * The answered approvals, before the model's first turn: approved calls run, refused
 * ones are told to the model as their result. Their items go before the answer item
 * (the untouched one prepared is replaced by a new one after them).
 */
async function answerApprovals(deps: ResponseDeps, prepared: Prepared, io: Io): Promise<void> {
  const done: { approval: Approval; item?: McpCallItem; sees: string }[] = [];
  for (const approval of prepared.approvals) {
    const { request } = approval;
    if (!approval.approve) {
      done.push({ approval, sees: `The user refused this call${approval.reason ? `: ${approval.reason}` : '.'}` });
      continue;
    }
    const tool = [...approval.server.tools.values()].find((t) => t.name === request.tool)!;
    const id = request.item.id.replace(/^mcpr_/, 'mcp_');
    const item = await runCall(deps, prepared, io, {
      tool,
      label: approval.server.label,
      call: request.call,
      id,
      approvalRequestId: request.item.id,
    });
    done.push({ approval, item, sees: modelSees(item) });
  }
  const answer = await deps.db.tx(async (q) => {
    await itemRepository.delete(q, prepared.run.tenant_id, prepared.run.conversation_id, prepared.messageId);
    for (const { approval, item, sees } of done) {
      const call = approval.request.call;
      const mcp: StoredMcpItem[] = [item ? { item, call_id: call.id } : ({ call_id: call.id } as StoredMcpItem)];
      await append(q, prepared, { role: 'assistant', content: '', payload: { tool_calls: [call], mcp } });
      await append(q, prepared, { role: 'tool', content: sees, payload: { tool_call_id: call.id, mcp: [] } });
    }
    const id = await appendAnswer(q, prepared);
    await runRepository.setMessage(q, prepared.run.id, id);
    return id;
  });
  prepared.messageId = answer;
  prepared.run = { ...prepared.run, message_id: answer };
  io.events?.nextTurn(answer);
  await seeHistoryAgain(deps, prepared);
}

interface CallToRun {
  tool: GrantedTool;
  label: string;
  call: ToolCall;
  id: string;
  approvalRequestId?: string;
}

/** One MCP call, streamed as OpenAI streams it, audited as the MCP endpoint audits its calls. */
async function runCall(deps: ResponseDeps, prepared: Prepared, io: Io, c: CallToRun): Promise<McpCallItem> {
  const base = {
    id: c.id,
    type: 'mcp_call' as const,
    server_label: c.label,
    name: c.tool.name,
    arguments: c.call.function.arguments,
    approval_request_id: c.approvalRequestId ?? null,
  };
  const write = (frames: string) => io.stream?.sse?.write(frames);
  let index = 0;
  if (io.events) {
    const [frames, at] = io.events.openItem({ ...base, output: null, error: null, status: 'in_progress' }, [
      ['response.mcp_call_arguments.delta', { delta: base.arguments }],
      ['response.mcp_call_arguments.done', { arguments: base.arguments }],
      ['response.mcp_call.in_progress'],
    ]);
    index = at;
    write(frames);
  }
  const startedAt = new Date();
  const started = performance.now();
  let status: McpCallStatus = 'error';
  let result: CallToolResult | undefined;
  let item: McpCallItem;
  const args = argumentsOf(base.arguments);
  if (!args) {
    // Refused before any upstream, as the endpoint refuses arguments it cannot take.
    status = 'denied';
    item = { ...base, output: null, error: 'The arguments are not a JSON object.', status: 'failed' };
  } else {
    try {
      result = await deps.mcpTools().call(prepared.principal, c.tool, args, { signal: io.signal });
      status = result.isError ? 'error' : 'ok';
      item = { ...base, ...resultText(result), status: result.isError ? 'failed' : 'completed' };
    } catch (error) {
      status = failedCallStatus(error);
      const message = error instanceof ToolCallFailed ? error.message : 'The tool server failed to answer.';
      item = { ...base, output: null, error: message, status: 'failed' };
    }
  }
  await recordCall(deps.mcpAudit, {
    principal: prepared.principal,
    server: c.tool.server,
    tool: c.tool.name,
    status,
    startedAt,
    durationMs: performance.now() - started,
    arguments: args ?? base.arguments,
    result,
  });
  if (io.events)
    write(io.events.closeItem(index, item, [[item.status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed']]));
  return item;
}

function argumentsOf(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text === '' ? '{}' : text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

type Queryable = Parameters<Parameters<ResponseDeps['db']['tx']>[0]>[0];

function append(q: Queryable, prepared: Prepared, item: { role: 'assistant' | 'tool'; content: string; payload: object }) {
  const { run } = prepared;
  return itemRepository.append(q, {
    id: newId('message'),
    conversation_id: run.conversation_id,
    tenant_id: run.tenant_id,
    status: 'completed',
    run_id: run.id,
    ...item,
  });
}

function appendResult(q: Queryable, prepared: Prepared, call: ToolCall, item: McpCallItem) {
  return append(q, prepared, { role: 'tool', content: modelSees(item), payload: { tool_call_id: call.id, mcp: [] } });
}

/** The next turn's answer item (in_progress), its id. */
async function appendAnswer(q: Queryable, prepared: Prepared): Promise<string> {
  const { run } = prepared;
  const row = await itemRepository.append(q, {
    id: newId('message'),
    conversation_id: run.conversation_id,
    tenant_id: run.tenant_id,
    role: 'assistant',
    content: '',
    status: 'in_progress',
    run_id: run.id,
    model: run.model,
  });
  return row.id;
}
