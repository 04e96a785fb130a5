// POST /api/llm/v1/rerank over fake nodes whose scores follow the test's rule: the
// shared shape (vLLM, llama.cpp server, TEI, Jina, Cohere), results best first and cut
// by top_n, /rerank (TEI's shape) where a node lacks /v1/rerank, a 400 where no node
// can rerank (Ollama, a server without either path), bounds as 400s before any engine
// is asked, usage recorded, rerankers labelled in /models, and the security cases (no
// credential, a revoked key, another tenant's model and node).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedWorld, type World } from '../helpers/world.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, usageRows } from './chat-support.js';

const PATH = '/api/llm/v1/rerank';
/** The test's own rule: how many times the document says "tide". */
const tides = (_query: string, document: string) => Math.min(1, (document.match(/tide/g) ?? []).length / 4);

describe('llm rerank', () => {
  let gw: TestGateway;
  let vllm: FakeEngine;
  let tei: FakeEngine;
  let bare: FakeEngine;
  let ollama: FakeEngine;
  let privateA: FakeEngine;
  let world: World;
  let key: string;

  before(async () => {
    vllm = await startFakeOpenAI({ models: ['bge-reranker-v2', 'chatty'], rerank: tides });
    // Serves /rerank only, as TEI does.
    tei = await startFakeOpenAI({ models: ['tei-scorer'], lacks: ['/v1/rerank'], rerank: tides });
    // Neither path: a chat server.
    bare = await startFakeOpenAI({ models: ['no-rerank-here'], lacks: ['/v1/rerank', '/rerank'] });
    ollama = await startFakeOllama({ models: ['ollama-rerank:latest'] });
    privateA = await startFakeOpenAI({ models: ['private-reranker'], rerank: tides });
    gw = await gatewayOver([vllm, tei, bare, ollama]);
    world = await seedWorld(gw, 'rerank');
    key = world.a.key.key;
    const node = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'for-a', engine: 'openai', url: privateA.url, tenantIds: [world.a.tenantId] },
    });
    assert.equal(node.status, 201, node.text);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([vllm, tei, bare, ollama, privateA].map((f) => f?.close()));
  });

  const rerank = (json: unknown, credential: { apiKey?: string; token?: string } = { apiKey: key }) =>
    gw.request('POST', PATH, { ...credential, json });
  const documents = ['no water', 'tide tide tide', { text: 'one tide' }, 'tide tide'];

  it('answers every document by relevance, best first, with the scores the node gave', async () => {
    const response = await rerank({ model: 'bge-reranker-v2', query: 'when is high tide', documents });
    assert.equal(response.status, 200, response.text);
    assert.match(response.body.id, /^rerank-/);
    assert.equal(response.body.model, 'bge-reranker-v2');
    assert.deepEqual(response.body.results, [
      { index: 1, relevance_score: 0.75 },
      { index: 3, relevance_score: 0.5 },
      { index: 2, relevance_score: 0.25 },
      { index: 0, relevance_score: 0 },
    ]);
    assert.ok(response.body.usage.prompt_tokens > 0);
    assert.equal(response.body.usage.total_tokens, response.body.usage.prompt_tokens);
    const sent = vllm.requests.at(-1)!;
    assert.equal(sent.path, '/v1/rerank');
    assert.deepEqual(sent.body.documents, ['no water', 'tide tide tide', 'one tide', 'tide tide'], '{text} documents go as strings');
  });

  it('cuts the results at top_n and returns the documents when asked, with a JWT too', async () => {
    const response = await rerank(
      { model: 'bge-reranker-v2', query: 'tide', documents, top_n: 2, return_documents: true },
      { token: world.a.member.token },
    );
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.results, [
      { index: 1, relevance_score: 0.75, document: { text: 'tide tide tide' } },
      { index: 3, relevance_score: 0.5, document: { text: 'tide tide' } },
    ]);
  });

  it("asks /rerank (TEI's shape) where a node has no /v1/rerank", async () => {
    const response = await rerank({ model: 'tei-scorer', query: 'tide', documents });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(
      response.body.results.map((r: { index: number }) => r.index),
      [1, 3, 2, 0],
    );
    assert.deepEqual(
      tei.requests.filter((r) => r.method === 'POST').map((r) => r.path),
      ['/v1/rerank', '/rerank'],
    );
    assert.deepEqual(tei.requests.at(-1)!.body.texts, ['no water', 'tide tide tide', 'one tide', 'tide tide']);
  });

  it('answers 400 where no node serving the model can rerank: Ollama, or a server with neither path', async () => {
    for (const model of ['ollama-rerank:latest', 'no-rerank-here']) {
      const response = await rerank({ model, query: 'tide', documents });
      assert.equal(response.status, 400, `${model}: ${response.text}`);
      assert.match(response.body.detail, /^model: no compute node serving this model can rerank/);
      assert.doesNotMatch(response.body.detail, /127\.0\.0\.1|localhost/, 'no node address in the answer');
    }
  });

  it('refuses bad input with a 400 naming the field, before any engine is asked', async () => {
    const asked = () => vllm.requests.filter((r) => r.path.includes('rerank')).length;
    const before = asked();
    const ok = { model: 'bge-reranker-v2', query: 'tide' };
    const cases: [unknown, RegExp][] = [
      [{ ...ok }, /documents/],
      [{ ...ok, documents: [] }, /documents/],
      [{ ...ok, documents: Array.from({ length: 1001 }, () => 'd') }, /documents/],
      [{ ...ok, documents: ['x'.repeat(32_769)] }, /documents/],
      [{ ...ok, documents: [''] }, /documents/],
      [{ ...ok, documents: ['   '] }, /documents/],
      [{ ...ok, documents: [{ content: 'x' }] }, /documents/],
      [{ ...ok, documents: [7] }, /documents/],
      [{ ...ok, documents: ['nul \u0000 inside'] }, /documents/],
      [{ model: 'bge-reranker-v2', documents: ['d'] }, /query/],
      [{ ...ok, query: 'q'.repeat(32_769), documents: ['d'] }, /query/],
      [{ query: 'tide', documents: ['d'] }, /model/],
      [{ ...ok, documents: ['d'], top_n: 0 }, /top_n/],
      [{ ...ok, documents: ['d'], top_n: 1.5 }, /top_n/],
      [{ ...ok, documents: ['d'], return_documents: 'yes' }, /return_documents/],
      [{ model: 'no-such-model', query: 'tide', documents: ['d'] }, /^model: unknown model/],
    ];
    for (const [json, detail] of cases) {
      const response = await rerank(json);
      assert.equal(response.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${response.text}`);
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.match(response.body.detail, detail, JSON.stringify(json).slice(0, 80));
    }
    assert.equal(asked(), before);
    // At the bounds: 1,000 documents of 32,768 characters' worth in all pass.
    const many = await rerank({ ...ok, documents: Array.from({ length: 1000 }, (_, i) => `tide ${i}`) });
    assert.equal(many.status, 200, many.text);
    assert.equal(many.body.results.length, 1000);
  });

  it('records usage under the endpoint "rerank", with the tokens the node reported', async () => {
    const { key: ownKey } = await createApiKey(gw, world.b.tenantId, 'usage');
    const response = await rerank({ model: 'bge-reranker-v2', query: 'high tide', documents: ['a tide', 'b'] }, { apiKey: ownKey });
    assert.equal(response.status, 200, response.text);
    // The fake counts words: (2 + 2) + (1 + 2).
    assert.equal(response.body.usage.prompt_tokens, 7);
    const rows = (await usageRows(gw, world.b.tenantId)).filter((r) => r.endpoint === 'rerank');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].model, 'bge-reranker-v2');
    assert.equal(rows[0].status, 'ok');
    assert.equal(rows[0].prompt_tokens, 7);
    assert.equal(rows[0].completion_tokens, 0);
  });

  it('answers an engine failure as a 503 with Retry-After, and scores that do not match the documents too', async () => {
    vllm.behaviour.status = 500;
    try {
      const response = await rerank({ model: 'bge-reranker-v2', query: 'tide', documents: ['d'] });
      assert.equal(response.status, 503, response.text);
      assert.ok(response.headers.get('retry-after'));
    } finally {
      delete vllm.behaviour.status;
    }
    vllm.behaviour.rerank = () => Number.NaN; // JSON null on the wire: not a score
    try {
      const response = await rerank({ model: 'bge-reranker-v2', query: 'tide', documents: ['d'] });
      assert.equal(response.status, 503, response.text);
    } finally {
      vllm.behaviour.rerank = tides;
    }
  });

  it('lists rerankers with kind "rerank" in /models, chat models without a kind', async () => {
    const list = await gw.request('GET', '/api/llm/v1/models', { apiKey: key });
    assert.equal(list.status, 200, list.text);
    const kinds = Object.fromEntries(list.body.data.map((m: { id: string; kind?: string }) => [m.id, m.kind]));
    assert.equal(kinds['bge-reranker-v2'], 'rerank');
    assert.equal(kinds['private-reranker'], 'rerank');
    assert.equal(kinds.chatty, undefined);
    if (gw.ctx.vector) assert.equal(kinds['gateway-word-vectors-en'], 'embedding');
    const one = await gw.request('GET', '/api/llm/v1/models/bge-reranker-v2', { apiKey: key });
    assert.equal(one.body.kind, 'rerank');
  });

  it("refuses no credential and a revoked key with 401, and another tenant's model as chat does", async () => {
    const json = { model: 'bge-reranker-v2', query: 'tide', documents: ['d'] };
    assert.equal((await gw.request('POST', PATH, { json })).status, 401);
    const revoked = await createApiKey(gw, world.a.tenantId, 'revoked');
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, revoked.id, 'revoked');
    assert.equal((await rerank(json, { apiKey: revoked.key })).status, 401);

    // Tenant A's own node serves private-reranker: A reranks with it, B gets what chat answers B.
    assert.equal((await rerank({ ...json, model: 'private-reranker' })).status, 200);
    const asB = await rerank({ ...json, model: 'private-reranker' }, { apiKey: world.b.key.key });
    const chatAsB = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: world.b.key.key,
      json: { model: 'private-reranker', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(asB.status, 400, asB.text);
    assert.equal(asB.body.detail, chatAsB.body.detail);
    assert.equal(privateA.requests.filter((r) => r.path.includes('rerank')).length, 1, "B's call never reached A's node");
  });
});
