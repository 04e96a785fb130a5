// Long tool calls through the stateless MCP endpoint: progress passes through to the
// client as it comes, a client's cancel (notifications/cancelled, which arrives in a
// POST of its own) aborts the call at the source, and a 2026-07-28 client that closes
// its stream cancels too. Another caller's cancel with the same request id does not.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallOptions } from '../../src/areas/llm/mcp/tool-source.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { connectClient, ERAS, FakeToolSource, MCP, post, until } from './mcp-endpoint-support.js';

/** A tool that reports progress twice, then waits until it is aborted (or released). */
function slowTool() {
  const started: AbortSignal[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const behaviour = async (_args: Record<string, unknown>, options: CallOptions) => {
    started.push(options.signal);
    options.onProgress?.({ progress: 1, total: 3, message: 'listed' });
    options.onProgress?.({ progress: 2, total: 3 });
    await Promise.race([
      released,
      new Promise<void>((resolve) => {
        if (options.signal.aborted) resolve();
        options.signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    ]);
    if (options.signal.aborted) throw new Error('aborted');
    return { content: [{ type: 'text' as const, text: 'done' }] };
  };
  return { behaviour, started, release: () => release() };
}

describe('MCP endpoint: progress and cancellation', () => {
  let gw: TestGateway;
  let world: World;
  const source = new FakeToolSource();
  const slow = slowTool();

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-calls');
    source
      .add(world.a.tenantId, 'work', { name: 'slow' }, slow.behaviour)
      .add(world.a.tenantId, 'work', { name: 'steps' }, async (_args, options) => {
        for (let step = 1; step <= 3; step++) options.onProgress?.({ progress: step, total: 3, message: `step ${step}` });
        return { content: [{ type: 'text', text: 'stepped' }] };
      });
    gw.ctx.llm.mcpTools = source;
  });
  after(async () => {
    slow.release();
    await gw.close();
  });

  const key = () => ({ 'x-api-key': world.a.key.key });

  for (const era of ERAS) {
    it(`passes progress through to a client that asked for it (${era})`, async () => {
      const client = await connectClient(gw, MCP, key(), era);
      const progress: unknown[] = [];
      const result = await client.callTool({ name: 'work_steps', arguments: {} }, { onprogress: (p) => progress.push(p) });
      assert.deepEqual(result.content, [{ type: 'text', text: 'stepped' }]);
      assert.deepEqual(progress, [
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'step 3' },
      ]);
      await client.close();
    });

    it(`aborts the call at the source when the client cancels it (${era})`, async () => {
      const client = await connectClient(gw, MCP, key(), era);
      const before = slow.started.length;
      const controller = new AbortController();
      const progress: unknown[] = [];
      const call = client.callTool(
        { name: 'work_slow', arguments: {} },
        { signal: controller.signal, onprogress: (p) => progress.push(p) },
      );
      await until(() => slow.started.length === before + 1 && progress.length === 2, 'the call started and reported progress');
      const signal = slow.started.at(-1)!;
      assert.equal(signal.aborted, false);
      controller.abort('the user gave up');
      await assert.rejects(call);
      await until(() => signal.aborted, 'the source saw the cancel');
      await client.close();
    });
  }

  it('matches a notifications/cancelled POST to the running call by credential and request id', async () => {
    const before = slow.started.length;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'call-77', method: 'tools/call', params: { name: 'work_slow', arguments: {} } });
    const running = post(gw, MCP, body, key());
    await until(() => slow.started.length === before + 1, 'the call started');
    const signal = slow.started.at(-1)!;
    const cancel = (headers: Record<string, string>, requestId: unknown) =>
      post(gw, MCP, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }), headers);
    // Another tenant's key, the tenant's admin, and the right caller with another id: none of them cancels it.
    assert.equal((await cancel({ 'x-api-key': world.b.key.key }, 'call-77')).status, 202);
    assert.equal((await cancel({ authorization: `Bearer ${world.a.admin.token}` }, 'call-77')).status, 202);
    assert.equal((await cancel(key(), 'call-78')).status, 202);
    assert.equal((await cancel(key(), 77)).status, 202);
    assert.equal(signal.aborted, false);
    // The caller's own cancel does, from another connection.
    assert.equal((await cancel(key(), 'call-77')).status, 202);
    await until(() => signal.aborted, 'the source saw the cancel');
    const answer = await running;
    assert.equal(answer.status, 200);
  });

  it('cancels when a 2026-07-28 client closes its stream', async () => {
    const before = slow.started.length;
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const controller = new AbortController();
    const request = fetch(gw.url + MCP, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        ...key(),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'work_slow',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'work_slow', arguments: {}, _meta: meta } }),
    });
    await until(() => slow.started.length === before + 1, 'the call started');
    const signal = slow.started.at(-1)!;
    controller.abort();
    await assert.rejects(request.then((r) => r.text()));
    await until(() => signal.aborted, 'the source saw the closed stream');
  });
});
