// The router against real engine servers on loopback: balancing, failover before
// the first byte, bounded attempts, model_not_found, unknown models, `auto`,
// cooldown and readmission by health probe. Handlers are not needed: the tests
// call ctx.llm.router.dispatch the way the chat handler does.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { AppError } from '../../src/platform/errors.js';
import { EngineError } from '../../src/engines/types.js';
import type { Lease } from '../../src/areas/llm/router/types.js';
import { ask, chatOn, hold, nodeNamed } from './router-support.js';
import { eventually } from '../helpers/eventually.js';

const unavailable = (detail: RegExp) => (error: unknown) => {
  assert.ok(error instanceof AppError, String(error));
  assert.equal(error.status, 503);
  assert.match(error.detail, detail);
  assert.ok(error.extra.retryAfterSeconds !== undefined && error.extra.retryAfterSeconds >= 1, 'Retry-After');
  return true;
};

describe('llm router: balancing and failover', () => {
  let gw: TestGateway;
  let a: FakeEngine, b: FakeEngine, c: FakeEngine, d: FakeEngine, o: FakeEngine;
  let tenantId: string;
  const chats = () => [a, b, c].map((f) => f.chatRequests());

  before(async () => {
    [a, b, c, d] = await Promise.all([
      startFakeOpenAI({ models: ['shared', 'ab', 'only-a', 'ad', 'dual'] }),
      startFakeOpenAI({ models: ['shared', 'ab'] }),
      startFakeOpenAI({ models: ['shared'] }),
      startFakeOpenAI({ models: ['ad'] }),
    ]);
    o = await startFakeOllama({ models: ['llama-o', 'dual'] });
    const nodes = [
      { engine: 'openai', url: a.url, name: 'a' },
      { engine: 'openai', url: b.url, name: 'b' },
      { engine: 'openai', url: c.url, name: 'c' },
      { engine: 'openai', url: d.url, name: 'd' },
      { engine: 'ollama', url: o.url, name: 'o' },
    ];
    gw = await startGateway({
      GATEWAY_NODES: JSON.stringify(nodes),
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODE_MAX_ATTEMPTS: '2',
      GATEWAY_NODE_FAILURES_BEFORE_COOLDOWN: '100',
      // No probe moves node state behind these tests' backs.
      GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '3600',
    });
    tenantId = (await seedTenant(gw, 'router')).tenantId;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([a, b, c, d, o].map((f) => f?.close()));
  });

  it('spreads concurrent requests by least outstanding, and rotates between idle nodes', async () => {
    const before = chats();
    const held: Lease[] = [];
    for (let i = 0; i < 6; i++) held.push(await hold(gw, tenantId, 'shared'));
    assert.deepEqual(
      chats().map((n, i) => n - before[i]!),
      [2, 2, 2],
    );
    for (const lease of held) lease.release('ok');

    // A node with requests outstanding gets none while an idle one serves the model.
    const busyA = [await hold(gw, tenantId, 'only-a'), await hold(gw, tenantId, 'only-a')];
    assert.deepEqual([await ask(gw, tenantId, 'ab'), await ask(gw, tenantId, 'ab'), await ask(gw, tenantId, 'ab')], ['b', 'b', 'b']);
    const toB = await hold(gw, tenantId, 'ab');
    assert.equal(toB.node.name, 'b');
    const toB2 = await hold(gw, tenantId, 'ab');
    assert.equal(toB2.node.name, 'b', 'b has 1 outstanding, a has 2');
    const tie = await hold(gw, tenantId, 'ab');
    assert.ok(['a', 'b'].includes(tie.node.name));
    for (const lease of [...busyA, toB, toB2, tie]) lease.release('ok');
    assert.equal(nodeNamed(gw, 'a').outstanding + nodeNamed(gw, 'b').outstanding, 0);

    // Idle nodes take turns.
    const served = [];
    for (let i = 0; i < 6; i++) served.push(await ask(gw, tenantId, 'shared'));
    assert.deepEqual(served.slice().sort(), ['a', 'a', 'b', 'b', 'c', 'c']);
  });

  for (const status of [503, 500]) {
    it(`fails over to another node when the first answers ${status} before any output`, async () => {
      const busy = await hold(gw, tenantId, 'only-a'); // b is picked first
      b.behaviour.status = status;
      try {
        const [aBefore, bBefore, failuresBefore] = [a.chatRequests(), b.chatRequests(), nodeNamed(gw, 'b').consecutiveFailures];
        assert.equal(await ask(gw, tenantId, 'ab'), 'a');
        assert.equal(b.chatRequests() - bBefore, 1);
        assert.equal(a.chatRequests() - aBefore, 1);
        assert.equal(nodeNamed(gw, 'b').consecutiveFailures, failuresBefore + 1, 'the failure counts against b');
      } finally {
        delete b.behaviour.status;
        busy.release('ok');
      }
      assert.equal(await ask(gw, tenantId, 'only-a'), 'a');
    });
  }

  it('neither retries elsewhere nor counts against the node an answer that blames the request (4xx)', async () => {
    const busy = await hold(gw, tenantId, 'only-a'); // b is picked first
    b.behaviour.status = 400;
    try {
      const [aBefore, bBefore, failuresBefore] = [a.chatRequests(), b.chatRequests(), nodeNamed(gw, 'b').consecutiveFailures];
      await assert.rejects(ask(gw, tenantId, 'ab'), (e: unknown) => e instanceof EngineError && e.failure === 'rejected');
      assert.equal(b.chatRequests() - bBefore, 1);
      assert.equal(a.chatRequests() - aBefore, 0, 'not tried on a');
      assert.equal(nodeNamed(gw, 'b').consecutiveFailures, failuresBefore, 'not a node failure');
      assert.equal(nodeNamed(gw, 'b').outstanding, 0, 'its lease ended');
    } finally {
      delete b.behaviour.status;
      busy.release('ok');
    }
  });

  it('fails over when the connection is refused', async () => {
    await d.close(); // still healthy in the router's eyes: no probe has run since
    const busy = await hold(gw, tenantId, 'only-a');
    const attempts: string[] = [];
    const { value, lease } = await gw.ctx.llm.router.dispatch(tenantId, 'ad', async (l) => {
      attempts.push(l.node.name);
      await l.engine.chat({
        model: 'ad',
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: 8,
        temperature: 0,
        signal: AbortSignal.timeout(5000),
      });
      return l.node.name;
    });
    lease.release('ok');
    busy.release('ok');
    assert.deepEqual(attempts, ['d', 'a']);
    assert.equal(value, 'a');
  });

  it('stops after maxAttempts when every node fails: 503 with Retry-After, no node tried twice', async () => {
    for (const f of [a, b, c]) f.behaviour.status = 503;
    try {
      const before = chats();
      await assert.rejects(
        gw.ctx.llm.router.dispatch(tenantId, 'shared', (l) => chatOn(l, 'shared')),
        unavailable(/failed/),
      );
      const tried = chats().map((n, i) => n - before[i]!);
      assert.equal(
        tried.reduce((x, y) => x + y, 0),
        2,
        'GATEWAY_NODE_MAX_ATTEMPTS=2 attempts in all',
      );
      assert.ok(
        tried.every((n) => n <= 1),
        `each node at most once: ${tried}`,
      );
    } finally {
      for (const f of [a, b, c]) delete f.behaviour.status;
    }
  });

  it('answers 503 naming the model when Ollama has not loaded it, and tries another node that has', async () => {
    o.behaviour.models = ['dual']; // the router still believes o serves llama-o
    await assert.rejects(ask(gw, tenantId, 'llama-o'), unavailable(/"llama-o" is not loaded on any node/));
    assert.equal(nodeNamed(gw, 'o').consecutiveFailures, 0, 'a missing model is not a node failure');
    // Still 503 (not 400) afterwards: the model is known, just not loaded.
    await assert.rejects(ask(gw, tenantId, 'llama-o'), unavailable(/not loaded/));

    o.behaviour.models = [];
    const busy = await hold(gw, tenantId, 'only-a'); // o is picked first for `dual`
    try {
      assert.equal(await ask(gw, tenantId, 'dual'), 'a');
    } finally {
      busy.release('ok');
      o.behaviour.models = ['llama-o', 'dual'];
    }
  });

  it('rejects an unknown model with 400 naming `model`', async () => {
    await assert.rejects(ask(gw, tenantId, 'no-such-model'), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        error.extra.errors?.map((e) => e.field),
        ['model'],
      );
      return true;
    });
  });

  it('resolves `auto` to the tenant default, else the first available model; excluded models are unknown', async () => {
    const t = await seedTenant(gw, 'auto');
    const admin = await tokenFor(gw, t.admin.id, t.tenantId);
    const router = gw.ctx.llm.router;
    const first = (await router.availableModels(t.tenantId))[0]!.id;
    assert.equal(await router.resolveModel(t.tenantId, 'auto'), first);

    const patch = (json: object) => gw.request('PATCH', `/api/auth/tenants/${t.tenantId}`, { token: admin, json });
    assert.equal((await patch({ defaultModel: 'only-a' })).status, 200);
    assert.equal(await router.resolveModel(t.tenantId, 'auto'), 'only-a', 'the settings cache dropped the tenant at once');
    assert.equal(await ask(gw, t.tenantId, 'auto'), 'a');

    assert.equal((await patch({ defaultModel: null, allowedModels: ['ab'] })).status, 200);
    assert.equal(await router.resolveModel(t.tenantId, 'auto'), 'ab');
    await assert.rejects(router.resolveModel(t.tenantId, 'shared'), (e: unknown) => e instanceof AppError && e.status === 400);
    assert.equal(await router.resolveModel(tenantId, 'shared'), 'shared', 'other tenants are unaffected');

    // The first allowed id, whichever node lists it: llama-o is on o, the last node, only.
    await router.refresh(nodeNamed(gw, 'o').definition.id); // o lists llama-o again (a confirmation probe may have seen it gone)
    assert.equal((await patch({ allowedModels: ['shared', 'llama-o'] })).status, 200);
    assert.deepEqual(
      (await router.availableModels(t.tenantId)).map((m) => m.id),
      ['llama-o', 'shared'],
    );
    assert.equal(await router.resolveModel(t.tenantId, 'auto'), 'llama-o');
    assert.equal(await ask(gw, t.tenantId, 'auto'), 'o');

    assert.equal((await patch({ allowedModels: ['not-served-anywhere'] })).status, 200);
    // Every node is up and none serves an allowed model: nothing is coming, so no Retry-After (issue 26).
    await assert.rejects(router.resolveModel(t.tenantId, 'auto'), (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.status, 503);
      assert.match(error.detail, /No model is available to this tenant: none of the models its allowedModels names is served/);
      assert.match(error.detail, /POST \/api\/llm\/v1\/nodes/);
      assert.equal(error.extra.retryAfterSeconds, undefined);
      assert.equal(error.extra.final, true);
      return true;
    });
    assert.equal(await router.autoModel(t.tenantId), undefined, '`auto` stands for nothing for this tenant');
    assert.equal(await router.autoModel(tenantId), 'ab', 'and still for the others');
  });

  it('names the node a pull goes to: Ollama here; none for OpenAI-compatible nodes or a local engine that is off', async () => {
    const lease = await gw.ctx.llm.router.pullTarget(tenantId, 'ollama');
    assert.equal(lease.node.name, 'o');
    assert.equal(lease.engine.kind, 'ollama');
    lease.release('ok');
    assert.equal(nodeNamed(gw, 'o').outstanding, 0);
    for (const engine of ['openai', 'local'] as const) {
      await assert.rejects(
        gw.ctx.llm.router.pullTarget(tenantId, engine),
        (e: unknown) => e instanceof AppError && e.status === 404,
        engine,
      );
    }
  });

  it('queries no database on the request path once the tenant is cached', async () => {
    await ask(gw, tenantId, 'shared');
    const queries = gw.ctx.db.stats.queries;
    for (let i = 0; i < 20; i++) await ask(gw, tenantId, i % 2 ? 'shared' : 'auto');
    await gw.ctx.llm.router.availableModels(tenantId);
    assert.equal(gw.ctx.db.stats.queries, queries);
  });
});

describe('llm router: cooldown', () => {
  let gw: TestGateway;
  let a: FakeEngine, b: FakeEngine, c: FakeEngine;
  let tenantId: string;

  before(async () => {
    [a, b, c] = await Promise.all([
      startFakeOpenAI({ models: ['m'] }),
      startFakeOpenAI({ models: ['m'] }),
      startFakeOpenAI({ models: ['lonely'] }),
    ]);
    gw = await startGateway({
      GATEWAY_NODES: JSON.stringify([a, b, c].map((f, i) => ({ engine: 'openai', url: f.url, name: ['a', 'b', 'c'][i] }))),
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODE_FAILURES_BEFORE_COOLDOWN: '2',
      GATEWAY_NODE_COOLDOWN_SECONDS: '1',
      GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '1',
    });
    tenantId = (await seedTenant(gw, 'cooldown')).tenantId;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([a, b, c].map((f) => f?.close()));
  });

  it('cools a failing node down, routes around it, and readmits it after a successful probe', async () => {
    a.behaviour.status = 503;
    const before = a.chatRequests();
    const served = [];
    for (let i = 0; i < 8; i++) served.push(await ask(gw, tenantId, 'm'));
    assert.ok(
      served.every((name) => name === 'b'),
      `every request answered by b: ${served}`,
    );
    assert.equal(a.chatRequests() - before, 2, 'a was tried until its second failure, then left alone');
    assert.equal(nodeNamed(gw, 'a').status, 'cooldown');
    assert.match(gw.logs(), /"area":"llm".*compute node a \(node_\w+\) cooled down/, 'the operator hears of it');

    // With b failing too, the 503 says when a comes back.
    b.behaviour.status = 503;
    await assert.rejects(ask(gw, tenantId, 'm'), unavailable(/failed/));
    delete b.behaviour.status;

    delete a.behaviour.status; // a recovers; only a probe after the cooldown lets it back in
    await eventually('a readmitted', () => nodeNamed(gw, 'a').status === 'healthy', 5000);
    const again = [];
    for (let i = 0; i < 6; i++) again.push(await ask(gw, tenantId, 'm'));
    assert.ok(again.includes('a'), `a serves again: ${again}`);
  });

  it('keeps a cooled-down node out while its probes fail', async () => {
    c.behaviour.status = 503;
    for (let i = 0; i < 2; i++) await assert.rejects(ask(gw, tenantId, 'lonely'), unavailable(/failed/));
    assert.equal(nodeNamed(gw, 'c').status, 'cooldown');
    await c.close();
    const probedAt = nodeNamed(gw, 'c').checkedAt?.getTime() ?? 0;
    const c2 = () => nodeNamed(gw, 'c');
    await eventually('a failed probe of c', () => c2().lastError !== undefined && (c2().checkedAt?.getTime() ?? 0) > probedAt, 5000);
    assert.equal(nodeNamed(gw, 'c').status, 'cooldown', 'a failed probe starts another cooldown');
    assert.ok(nodeNamed(gw, 'c').lastError);
    await assert.rejects(ask(gw, tenantId, 'lonely'), unavailable(/No healthy compute node serves model "lonely"/));
    assert.deepEqual(
      (await gw.ctx.llm.router.availableModels(tenantId)).map((m) => m.id),
      ['m'],
      'GET /models lists what can answer now',
    );
  });
});
