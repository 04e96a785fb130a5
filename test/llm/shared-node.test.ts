// Issue 26: one tenant could take a shared model away from every tenant. A node
// without /v1/embeddings answers 404 for the endpoint; the router took that for a
// missing model and dropped the model from the node's list until the next probe, so
// tenant B's embeddings request made tenant A's chats fail. Two tenants, one shared
// node (GATEWAY_NODES, no tenantIds): nothing B sends changes what A can use, and B
// is told which endpoint the node lacks.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { nodeNamed } from './router-support.js';

describe('llm: a shared node, two tenants', () => {
  let gw: TestGateway;
  let node: FakeEngine;
  let keyA: string, keyB: string;

  before(async () => {
    // A vLLM-like server that has chat only, and lists one model it cannot load.
    node = await startFakeOpenAI({
      models: ['fake-model', 'ghost'],
      lacks: ['/v1/embeddings', '/v1/completions'],
      unservable: ['ghost'],
    });
    gw = await startGateway({
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: node.url, name: 'shared' }]),
      GATEWAY_LOCAL_ENGINE: 'off',
      // No health probe runs during the test: whatever changes the node's list, it is not the probe.
      GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '3600',
    });
    const world = await seedWorld(gw, 'shared-node');
    keyA = world.a.key.key;
    keyB = world.b.key.key;
  });
  after(async () => {
    await gw?.close();
    await node?.close();
  });

  const modelsOf = async (apiKey: string) => {
    const response = await gw.request('GET', '/api/llm/v1/models', { apiKey });
    assert.equal(response.status, 200, response.text);
    return response.body.data.map((m: { id: string }) => m.id);
  };
  const chatA = (model: string) =>
    gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: keyA,
      json: { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 8 },
    });

  it("tenant B's requests to endpoints the node lacks never change what tenant A can use; B is told the endpoint", async () => {
    const listedBefore = await modelsOf(keyA);
    assert.ok(listedBefore.includes('fake-model') && listedBefore.includes('auto'), listedBefore.join());

    for (let round = 0; round < 3; round++) {
      const embeddings = await gw.request('POST', '/api/llm/v1/embeddings', { apiKey: keyB, json: { model: 'fake-model', input: 'hi' } });
      assert.equal(embeddings.status, 400, embeddings.text);
      assert.match(embeddings.body.detail, /has no \/v1\/embeddings endpoint/);
      assert.doesNotMatch(embeddings.body.detail, /context window|not loaded|127\.0\.0\.1/);
      assert.equal(embeddings.body.error.type, 'invalid_request_error');
      assert.equal(embeddings.headers.get('retry-after'), null, 'retrying changes nothing');

      const completions = await gw.request('POST', '/api/llm/v1/completions', {
        apiKey: keyB,
        json: { model: 'fake-model', prompt: 'hi' },
      });
      assert.equal(completions.status, 400, completions.text);
      assert.match(completions.body.detail, /has no \/v1\/completions endpoint/);
      assert.doesNotMatch(completions.body.detail, /context window/);

      // A's chats, `auto` and by name, right after each of B's requests.
      for (const model of ['auto', 'fake-model']) {
        const chat = await chatA(model);
        assert.equal(chat.status, 200, `round ${round}, ${model}: ${chat.text}`);
        assert.equal(chat.body.model, 'fake-model');
      }
    }
    assert.deepEqual(await modelsOf(keyA), listedBefore, "A's /models is unchanged");
    assert.deepEqual(await modelsOf(keyB), listedBefore, "and so is B's: nothing was taken from the node's list");
    assert.equal(nodeNamed(gw, 'shared').consecutiveFailures, 0, 'a missing endpoint is not a node failure');
    assert.equal(nodeNamed(gw, 'shared').status, 'healthy');
  });

  it("a model the node lists but cannot load: B gets 503 for it, and it stays listed while the node's own listing names it", async () => {
    for (let round = 0; round < 3; round++) {
      const ghost = await gw.request('POST', '/api/llm/v1/chat/completions', {
        apiKey: keyB,
        json: { model: 'ghost', messages: [{ role: 'user', content: 'x' }] },
      });
      assert.equal(ghost.status, 503, ghost.text);
      assert.match(ghost.body.detail, /"ghost" is not loaded/);
      assert.equal((await chatA('fake-model')).status, 200);
    }
    // B's requests took nothing from the list; only a probe of the node's listing may, and it still names it.
    assert.ok(nodeNamed(gw, 'shared').serves('ghost'));
    assert.ok((await modelsOf(keyA)).includes('ghost'));
    await gw.ctx.llm.router.refresh();
    assert.ok(nodeNamed(gw, 'shared').serves('ghost'));
  });

  it('the OpenAI SDK shows B the endpoint the node lacks, at once (a 400 is not retried)', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/api/llm/v1`, apiKey: keyB, maxRetries: 2 });
    const before = node.workRequests();
    await assert.rejects(client.embeddings.create({ model: 'fake-model', input: 'hi' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(error.message, /\/v1\/embeddings/);
      return true;
    });
    assert.equal(node.workRequests() - before, 1, 'one request reached the node: the SDK did not retry');
  });

  it('security: no credential and an unknown key are 401 before any node is asked', async () => {
    const before = node.workRequests();
    const none = await gw.request('POST', '/api/llm/v1/embeddings', { json: { model: 'fake-model', input: 'hi' } });
    assert.equal(none.status, 401);
    const wrong = await gw.request('POST', '/api/llm/v1/embeddings', {
      apiKey: 'rdk_not-a-key',
      json: { model: 'fake-model', input: 'hi' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(node.workRequests(), before);
  });
});
