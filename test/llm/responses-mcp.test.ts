// Tools the platform runs itself: a Responses request with `tools: [{type: "mcp"}]`
// whose (fake) model calls a tool of a registered MCP server (an SDK-built upstream on
// loopback). The gateway lists the granted tools (mcp_list_tools), runs the call
// through the registry (mcp_call, one audit record), gives the model the result and
// returns its answer; as JSON and as OpenAI's event stream (the openai SDK as client).
// Approvals (approve and refuse), grants and tenants (400 naming the field, no upstream
// call), server_url, allowed_tools and the step limit.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { gatewayOver } from './chat-support.js';
import { mcpRequests, startMockUpstream, tool, type MockUpstream } from './mcp-registry-support.js';

const ECHO_ARGS = '{"text":"hi"}';
const ECHO_OUTPUT = 'echo:{"text":"hi"}';

describe('responses API mcp tools', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let upstream: MockUpstream;
  let other: MockUpstream;
  let world: World;
  let client: OpenAI;
  let ungranted: OpenAI;
  let clientB: OpenAI;
  const chats = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');
  const mcp = (extra: Record<string, unknown> = {}) => ({ type: 'mcp', server_label: 'tools', require_approval: 'never', ...extra }) as any;
  const post = (apiKey: string, json: unknown) => gw.request('POST', '/api/llm/v1/responses', { apiKey, json });

  before(async () => {
    upstream = await startMockUpstream([tool('echo'), tool('fails'), { ...tool('lookup'), annotations: { readOnlyHint: true } }]);
    other = await startMockUpstream([tool('echo')]);
    fake = await startFakeOpenAI({ models: ['tool-model'], toolCalls: [{ name: 'echo', arguments: ECHO_ARGS }] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'resp-mcp');
    const register = async (name: string, url: string, tenantId: string) => {
      const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
        token: world.platform.admin.token,
        json: { name, url, auth: { type: 'none' }, timeoutSeconds: 5, tenantIds: [tenantId] },
      });
      assert.equal(created.status, 201, created.text);
    };
    await register('tools', upstream.url, world.a.tenantId);
    await register('secret', other.url, world.b.tenantId);
    const granted = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${world.a.key.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow: ['tools/*'] } },
    });
    assert.equal(granted.status, 200, granted.text);
    const bare = await issueApiKey(gw.ctx, world.a.tenantId, { name: 'no grant' }, world.a.admin.id);
    const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    client = sdk(world.a.key.key);
    ungranted = sdk(bare.key);
    clientB = sdk(world.b.key.key);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    await upstream?.close();
    await other?.close();
  });

  it('lists the tools, runs the call upstream, gives the model its result and answers (JSON), with one audit record', async () => {
    const callsBefore = upstream.calls.length;
    const response = await client.responses.create({ model: 'tool-model', input: 'Echo hi', tools: [mcp()] });
    assert.equal(response.status, 'completed');
    assert.deepEqual(
      response.output.map((o) => o.type),
      ['mcp_list_tools', 'mcp_call', 'message'],
    );
    const list = response.output[0] as OpenAI.Responses.ResponseOutputItem.McpListTools;
    assert.equal(list.server_label, 'tools');
    assert.deepEqual(
      list.tools.map((t) => t.name),
      ['echo', 'fails', 'lookup'],
    );
    assert.deepEqual(list.tools[0]!.input_schema, tool('echo').inputSchema);
    assert.deepEqual(list.tools[2]!.annotations, { readOnlyHint: true });
    const call = response.output[1] as OpenAI.Responses.ResponseOutputItem.McpCall;
    assert.equal(call.server_label, 'tools');
    assert.equal(call.name, 'echo');
    assert.equal(call.arguments, ECHO_ARGS);
    assert.equal(call.output, ECHO_OUTPUT);
    assert.equal(call.error, null);
    assert.equal(call.status, 'completed');
    assert.equal(response.output_text, `Fake answer to tool result: ${ECHO_OUTPUT}`);

    assert.deepEqual(upstream.calls.slice(callsBefore), [{ name: 'echo', args: { text: 'hi' } }]);
    // The model's first turn was offered the tools; its second got the call and the result.
    const [first, second] = chats()
      .slice(-2)
      .map((r) => r.body);
    assert.deepEqual(
      first.tools.map((t: any) => t.function.name),
      ['echo', 'fails', 'lookup'],
    );
    const sent = second.messages.slice(-2);
    assert.equal(sent[0].role, 'assistant');
    assert.equal(sent[0].tool_calls[0].function.name, 'echo');
    assert.deepEqual(sent[1], { role: 'tool', content: ECHO_OUTPUT, tool_call_id: sent[0].tool_calls[0].id });

    const audit = await gw.request('GET', '/api/llm/v1/mcp/calls?limit=1', { token: world.a.admin.token });
    const record = audit.body.data[0];
    assert.equal(record.server, 'tools');
    assert.equal(record.tool, 'echo');
    assert.equal(record.status, 'ok');
    assert.equal(record.keyId, world.a.key.id);
    assert.equal(record.argumentsBytes, Buffer.byteLength(ECHO_ARGS));

    // Read back the same; the input items are the caller's message only.
    const read = await client.responses.retrieve(response.id);
    assert.deepEqual(read.output, response.output);
    const inputs = await client.responses.inputItems.list(response.id);
    assert.deepEqual(
      inputs.data.map((i) => i.type),
      ['message'],
    );
  });

  it('streams the mcp_list_tools and mcp_call events around their items, then the answer', async () => {
    const stream = await client.responses.create({ model: 'tool-model', input: 'Echo hi', tools: [mcp()], stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) =>
      e.type === 'response.output_item.added' || e.type === 'response.output_item.done' ? `${e.type}:${e.item.type}` : e.type,
    );
    const mcpPart = types.filter((t) => t.includes('mcp') || t.startsWith('response.output_item'));
    assert.deepEqual(mcpPart, [
      'response.output_item.added:mcp_list_tools',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done:mcp_list_tools',
      'response.output_item.added:mcp_call',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done:mcp_call',
      'response.output_item.added:message',
      'response.output_item.done:message',
    ]);
    assert.ok(!types.includes('response.function_call_arguments.delta'), 'the MCP call is not streamed as a function call');
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    assert.equal(done.type, 'response.completed');
    assert.deepEqual(
      done.response.output.map((o) => o.type),
      ['mcp_list_tools', 'mcp_call', 'message'],
    );
    const itemDone = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'mcp_call') as any;
    assert.equal(itemDone.item.output, ECHO_OUTPUT);
    assert.deepEqual(done.response.output[1], itemDone.item);
    const outputIndexes = events.filter((e) => e.type === 'response.output_item.added').map((e: any) => e.output_index);
    assert.deepEqual(outputIndexes, [0, 1, 2]);
  });

  it('require_approval: an mcp_approval_request ends the response; approving runs the call and goes on', async () => {
    const callsBefore = upstream.calls.length;
    const asked = await client.responses.create({ model: 'tool-model', input: 'Echo hi', tools: [mcp({ require_approval: 'always' })] });
    assert.equal(asked.status, 'completed');
    assert.deepEqual(
      asked.output.map((o) => o.type),
      ['mcp_list_tools', 'mcp_approval_request'],
    );
    const request = asked.output[1] as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    assert.equal(request.name, 'echo');
    assert.equal(request.arguments, ECHO_ARGS);
    assert.equal(upstream.calls.length, callsBefore, 'nothing ran before approval');

    const approved = await client.responses.create({
      model: 'tool-model',
      previous_response_id: asked.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools: [mcp({ require_approval: 'always' })],
    });
    assert.equal(approved.status, 'completed');
    assert.deepEqual(
      approved.output.map((o) => o.type),
      ['mcp_list_tools', 'mcp_call', 'message'],
    );
    const call = approved.output[1] as OpenAI.Responses.ResponseOutputItem.McpCall;
    assert.equal(call.approval_request_id, request.id);
    assert.equal(call.output, ECHO_OUTPUT);
    assert.equal(approved.output_text, `Fake answer to tool result: ${ECHO_OUTPUT}`);
    assert.deepEqual(upstream.calls.slice(callsBefore), [{ name: 'echo', args: { text: 'hi' } }]);
    const inputs = await client.responses.inputItems.list(approved.id);
    assert.deepEqual(
      inputs.data.map((i) => i.type),
      ['mcp_approval_response'],
    );

    // The same request id answered again by another tenant: not their response.
    const foreign = await post(world.b.key.key, {
      model: 'tool-model',
      previous_response_id: asked.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(upstream.calls.length, callsBefore + 1);
  });

  it('require_approval: refusing runs nothing and tells the model; an unknown request id is a 400 naming it', async () => {
    const callsBefore = upstream.calls.length;
    const tools = [mcp({ require_approval: { never: { tool_names: ['lookup'] } } })];
    const asked = await client.responses.create({ model: 'tool-model', input: 'Echo hi', tools });
    const request = asked.output.find((o) => o.type === 'mcp_approval_request')!;
    const refused = await client.responses.create({
      model: 'tool-model',
      previous_response_id: asked.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }],
      tools,
    });
    assert.equal(refused.status, 'completed');
    assert.deepEqual(
      refused.output.map((o) => o.type),
      ['mcp_list_tools', 'message'],
    );
    assert.equal(refused.output_text, 'Fake answer to tool result: The user refused this call: not now');
    assert.equal(upstream.calls.length, callsBefore);

    const unknown = await post(world.a.key.key, {
      model: 'tool-model',
      previous_response_id: asked.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }],
      tools,
    });
    assert.equal(unknown.status, 400, unknown.text);
    assert.equal(unknown.body.errors[0].field, 'input[0].approval_request_id');
    const noPrevious = await post(world.a.key.key, {
      model: 'tool-model',
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      tools,
    });
    assert.equal(noPrevious.status, 400, noPrevious.text);
    assert.equal(upstream.calls.length, callsBefore);
  });

  it('a key without a grant, another tenant’s server and an unknown one are the same 400 naming the field; no upstream is reached', async () => {
    const before = [mcpRequests(upstream).length, mcpRequests(other).length, chats().length];
    const noGrant = await post((ungranted as any).apiKey, { model: 'tool-model', input: 'x', tools: [mcp()] });
    const foreign = await post(world.a.key.key, { model: 'tool-model', input: 'x', tools: [mcp({ server_label: 'secret' })] });
    const unknown = await post(world.a.key.key, { model: 'tool-model', input: 'x', tools: [mcp({ server_label: 'nothing-here' })] });
    for (const answer of [noGrant, foreign, unknown]) {
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.errors[0].field, 'tools[0].server_label');
    }
    assert.equal(foreign.body.errors[0].message, unknown.body.errors[0].message, 'another tenant’s server is not told apart');
    const badUrl = await post(world.a.key.key, {
      model: 'tool-model',
      input: 'x',
      tools: [mcp({ server_label: 'anything', server_url: other.url })],
    });
    assert.equal(badUrl.status, 400, badUrl.text);
    assert.equal(badUrl.body.errors[0].field, 'tools[0].server_url');
    const headers = await post(world.a.key.key, { model: 'tool-model', input: 'x', tools: [mcp({ headers: { authorization: 'x' } })] });
    assert.equal(headers.status, 400);
    assert.equal(headers.body.errors[0].field, 'tools[0].headers');
    assert.deepEqual([mcpRequests(upstream).length, mcpRequests(other).length, chats().length], before);
    // Tenant B's own key does reach its own server's label... but not A's.
    const fromB = await clientB.responses
      .create({ model: 'tool-model', input: 'x', tools: [mcp({ server_label: 'tools' })] })
      .catch((e) => e);
    assert.equal(fromB.status, 400);
  });

  it('server_url names a registered server by its URL; allowed_tools narrows what the model is offered', async () => {
    const response = await client.responses.create({
      model: 'tool-model',
      input: 'Echo hi',
      tools: [mcp({ server_label: 'my-label', server_url: upstream.url, allowed_tools: ['echo', 'lookup'] })],
    });
    const list = response.output[0] as OpenAI.Responses.ResponseOutputItem.McpListTools;
    assert.equal(list.server_label, 'my-label');
    assert.deepEqual(
      list.tools.map((t) => t.name),
      ['echo', 'lookup'],
    );
    assert.equal((response.output[1] as OpenAI.Responses.ResponseOutputItem.McpCall).server_label, 'my-label');
    const offered = chats()
      .at(-2)!
      .body.tools.map((t: any) => t.function.name);
    assert.deepEqual(offered, ['echo', 'lookup']);

    const readOnly = await client.responses.create({
      model: 'tool-model',
      input: 'x',
      tools: [mcp({ allowed_tools: { read_only: true } })],
    });
    assert.deepEqual(
      (readOnly.output[0] as OpenAI.Responses.ResponseOutputItem.McpListTools).tools.map((t) => t.name),
      ['lookup'],
    );
  });

  it('stops after 8 model turns: the response is incomplete (max_tool_calls), every call ran and is audited', async () => {
    fake.behaviour.toolCallsAlways = true;
    try {
      const chatsBefore = chats().length;
      const callsBefore = upstream.calls.length;
      const response = await client.responses.create({ model: 'tool-model', input: 'Echo forever', tools: [mcp()] });
      assert.equal(response.status, 'incomplete');
      assert.deepEqual(response.incomplete_details, { reason: 'max_tool_calls' as any });
      assert.equal(response.output.filter((o) => o.type === 'mcp_call').length, 8);
      assert.equal(chats().length - chatsBefore, 8);
      assert.equal(upstream.calls.length - callsBefore, 8);
      const audit = await gw.request('GET', '/api/llm/v1/mcp/calls?limit=8', { token: world.a.admin.token });
      assert.equal(audit.body.data.filter((r: any) => r.tool === 'echo' && r.status === 'ok').length, 8);
    } finally {
      fake.behaviour.toolCallsAlways = false;
    }
  });

  it("counts its calls against the key's toolCallsPerMinute: over it, the mcp_call fails and reaches no upstream", async () => {
    const limited = await issueApiKey(gw.ctx, world.a.tenantId, { name: 'two calls a minute' }, world.a.admin.id);
    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${limited.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow: ['tools/*'] }, limits: { toolCallsPerMinute: 2 } },
    });
    assert.equal(patched.status, 200, patched.text);
    const sdk = new OpenAI({ apiKey: limited.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    fake.behaviour.toolCallsAlways = true;
    try {
      const callsBefore = upstream.calls.length;
      const response = await sdk.responses.create({ model: 'tool-model', input: 'Echo forever', tools: [mcp()] });
      const calls = response.output.filter((o) => o.type === 'mcp_call') as OpenAI.Responses.ResponseOutputItem.McpCall[];
      assert.deepEqual(
        calls.slice(0, 3).map((c) => c.status),
        ['completed', 'completed', 'failed'],
      );
      assert.match(calls[2]!.error ?? '', /toolCallsPerMinute/);
      assert.equal(upstream.calls.length - callsBefore, 2);
      const audit = await gw.request('GET', `/api/llm/v1/mcp/calls?limit=${calls.length}`, { token: world.a.admin.token });
      const mine = audit.body.data.filter((r: any) => r.keyId === limited.id);
      assert.equal(mine.filter((r: any) => r.status === 'ok').length, 2);
      assert.equal(mine.filter((r: any) => r.status === 'denied').length, calls.length - 2);
    } finally {
      fake.behaviour.toolCallsAlways = false;
    }
  });
});
