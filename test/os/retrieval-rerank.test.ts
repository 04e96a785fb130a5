// Reranking in retrieval, through the API: a collection (or a ragScope, or the search
// itself) names a reranker on a fake node whose scores follow the test's own rule (how
// often a passage says "tide"), so the answer's order must follow that rule and not the
// fused one; a reranked query is answerable only when its best score reaches 0.5; a
// reranker that cannot answer (node failing, model unknown, another tenant's) leaves the
// fused order with retrieval.reranker "unavailable" and status 200. Plus rerankModel on
// the collection record (create, read, patch) and the security cases of the fields.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from '../llm/chat-support.js';
import { RERANK_ANSWERABLE } from '../../src/areas/os/retrieval/rerank.js';

const SEARCH = '/api/os/search';
const RERANKER = 'bge-reranker-fake';
/** The test's rule: a quarter point per "tide", at most 1. */
const tides = (_query: string, document: string) => Math.min(1, (document.match(/\btide\b/g) ?? []).length / 4);

// Every passage is about the harbour (BM25 finds them all for "harbour", the more the
// better); the rule ranks them by "tide", the other way round.
const DOCUMENTS: [string, string][] = [
  ['a.txt', 'The harbour harbour harbour harbour office opens at eight. Boats moor at the harbour wall.'],
  ['b.txt', 'The harbour harbour harbour pilot boards ships at the outer buoy. One tide table is posted.'],
  ['c.txt', 'The harbour harbour gates close when the tide falls and open when the tide rises again.'],
  ['d.txt', 'At the harbour the tide turns twice a day; the tide gauge shows the tide and the spring tide.'],
];

describe('retrieval with a reranker', () => {
  let gw: TestGateway;
  let node: FakeEngine;
  let privateB: FakeEngine;
  let world: World;
  let collectionId: string;
  let plainCollectionId: string;
  const names = (data: { documentName: string }[]) => data.map((s) => s.documentName);
  const search = (json: Record<string, unknown>, apiKey = world.a.key.key) => gw.request('POST', SEARCH, { apiKey, json });
  const reranks = () => node.requests.filter((r) => r.path === '/v1/rerank').length;

  before(async () => {
    node = await startFakeOpenAI({ models: ['chat-model', RERANKER], rerank: tides });
    privateB = await startFakeOpenAI({ models: ['b-reranker'], rerank: tides });
    gw = await gatewayOver([node]);
    world = await seedWorld(gw, 'rerank-search');
    const added = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'for-b', engine: 'openai', url: privateB.url, tenantIds: [world.b.tenantId] },
    });
    assert.equal(added.status, 201, added.text);
    const workspace = await gw.request('POST', '/api/os/workspaces', { apiKey: world.a.key.key, json: { name: 'Port' } });
    assert.equal(workspace.status, 201, workspace.text);
    const make = async (name: string, rerankModel?: string) => {
      const created = await gw.request('POST', `/api/os/workspaces/${workspace.body.id}/collections`, {
        apiKey: world.a.key.key,
        json: { name, embeddingModel: null, ...(rerankModel ? { rerankModel } : {}) },
      });
      assert.equal(created.status, 201, created.text);
      return created.body;
    };
    const reranked = await make('Reranked', RERANKER);
    assert.equal(reranked.rerankModel, RERANKER);
    collectionId = reranked.id;
    const plain = await make('Plain');
    assert.equal(plain.rerankModel, null);
    plainCollectionId = plain.id;
    const ids: string[] = [];
    for (const id of [collectionId, plainCollectionId])
      for (const [name, text] of DOCUMENTS) {
        const response = await gw.request('POST', `/api/os/collections/${id}/documents`, { apiKey: world.a.key.key, json: { name, text } });
        assert.equal(response.status, 202, response.text);
        ids.push(response.body.id);
      }
    for (const id of ids)
      await eventually(`document ${id} ready`, async () => {
        const doc = (await gw.request('GET', `/api/os/documents/${id}`, { apiKey: world.a.key.key })).body;
        assert.notEqual(doc.status, 'failed', doc.error);
        return doc.status === 'ready';
      });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([node?.close(), privateB?.close()]);
  });

  it("orders by the collection's reranker's scores, not the fused ranking, and shows them", async () => {
    const fused = await search({ query: 'harbour', collectionIds: [plainCollectionId], topK: 4 });
    assert.equal(fused.status, 200, fused.text);
    assert.equal(fused.body.retrieval.reranker, undefined, 'no reranker named, none said');
    assert.equal(fused.body.data[0].documentName, 'a.txt', 'BM25 puts the most "harbour" first');

    const before = reranks();
    const reranked = await search({ query: 'harbour', collectionIds: [collectionId], topK: 3 });
    assert.equal(reranked.status, 200, reranked.text);
    assert.equal(reranked.body.status, 'active');
    assert.equal(reranked.body.retrieval.reranker, 'applied');
    assert.deepEqual(names(reranked.body.data), ['d.txt', 'c.txt', 'b.txt'], 'the rule decides; top-k cut after reranking');
    assert.deepEqual(
      reranked.body.data.map((s: { score: number }) => s.score),
      [1, 0.5, 0.25],
    );
    assert.equal(reranks(), before + 1, 'one rerank call for the scope');
    const sent = node.requests.at(-1)!.body;
    assert.equal(sent.model, RERANKER);
    assert.equal(sent.query, 'harbour');
    assert.equal(sent.documents.length, 4, 'every fused candidate (up to 40) is scored');
  });

  it('takes the search body over the collection, and a ragScope over both', async () => {
    const viaBody = await search({ query: 'harbour', collectionIds: [plainCollectionId], rerankModel: RERANKER });
    assert.equal(viaBody.body.retrieval.reranker, 'applied');
    assert.equal(viaBody.body.data[0].documentName, 'd.txt');

    const viaScope = await search({ query: 'harbour', ragScopes: [{ collectionIds: [plainCollectionId], rerankModel: RERANKER }] });
    assert.equal(viaScope.body.retrieval.reranker, 'applied');
    assert.equal(viaScope.body.data[0].documentName, 'd.txt');

    // The scope's own model wins over the body's: an unknown one there is unavailable, whatever the body says.
    const scopeWins = await search({
      query: 'harbour',
      rerankModel: RERANKER,
      ragScopes: [{ collectionIds: [collectionId], rerankModel: 'no-such-reranker' }],
    });
    assert.equal(scopeWins.status, 200, scopeWins.text);
    assert.equal(scopeWins.body.retrieval.reranker, 'unavailable');
  });

  it(`abstains when the best reranked score is under ${RERANK_ANSWERABLE}, whatever fusion thought`, async () => {
    const fused = await search({ query: 'harbour', collectionIds: [plainCollectionId] });
    assert.equal(fused.body.status, 'active', 'fusion finds the query answerable');
    node.behaviour.rerank = (_query, document) => tides(_query, document) / 3; // at most 0.33
    try {
      const response = await search({ query: 'harbour', collectionIds: [collectionId] });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.retrieval.reranker, 'applied');
      assert.equal(response.body.status, 'no_matches');
      assert.deepEqual(response.body.data, []);
    } finally {
      node.behaviour.rerank = tides;
    }
  });

  it('keeps the fused order with reranker "unavailable" and status 200 when the reranker cannot answer', async () => {
    const fused = names((await search({ query: 'harbour', collectionIds: [plainCollectionId] })).body.data);
    node.behaviour.status = 500;
    try {
      const down = await search({ query: 'harbour', collectionIds: [collectionId] });
      assert.equal(down.status, 200, down.text);
      assert.equal(down.body.retrieval.reranker, 'unavailable');
      assert.deepEqual(names(down.body.data), fused);
    } finally {
      delete node.behaviour.status;
    }
    const unknown = await search({ query: 'harbour', collectionIds: [collectionId], rerankModel: 'no-such-reranker' });
    assert.equal(unknown.status, 200, unknown.text);
    assert.equal(unknown.body.retrieval.reranker, 'unavailable');
    assert.deepEqual(names(unknown.body.data), fused);
  });

  it("never reaches another tenant's reranker: B's model is unavailable to A", async () => {
    const response = await search({ query: 'harbour', collectionIds: [collectionId], rerankModel: 'b-reranker' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.retrieval.reranker, 'unavailable');
    assert.equal(privateB.requests.filter((r) => r.path.includes('rerank')).length, 0);
  });

  it('reads, patches and clears rerankModel on the collection record; refuses malformed values', async () => {
    const patch = (json: unknown, apiKey = world.a.key.key) =>
      gw.request('PATCH', `/api/os/collections/${plainCollectionId}`, { apiKey, json });
    const set = await patch({ rerankModel: 'another-reranker' });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.rerankModel, 'another-reranker');
    assert.equal(
      (await gw.request('GET', `/api/os/collections/${plainCollectionId}`, { apiKey: world.a.key.key })).body.rerankModel,
      'another-reranker',
    );
    const unrelated = await patch({ description: 'still reranked' });
    assert.equal(unrelated.body.rerankModel, 'another-reranker', 'a patch without the field keeps it');
    const cleared = await patch({ rerankModel: null });
    assert.equal(cleared.body.rerankModel, null);
    for (const bad of ['', '   ', 7, 'x'.repeat(201)]) {
      const response = await patch({ rerankModel: bad });
      assert.equal(response.status, 400, `${JSON.stringify(bad)}: ${response.text}`);
      assert.match(response.body.detail, /rerankModel/);
    }
    assert.equal((await patch({ rerankModel: RERANKER }, world.b.key.key)).status, 404, "another tenant's collection");
  });

  it('refuses a malformed rerankModel on search and ragScopes with a 400, and no credential with a 401', async () => {
    for (const json of [
      { query: 'tide', collectionIds: [collectionId], rerankModel: '' },
      { query: 'tide', collectionIds: [collectionId], rerankModel: ['m'] },
      { query: 'tide', ragScopes: [{ collectionIds: [collectionId], rerankModel: 42 }] },
    ]) {
      const response = await search(json);
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.match(response.body.detail, /rerankModel/);
    }
    const anonymous = await gw.request('POST', SEARCH, { json: { query: 'tide', collectionIds: [collectionId], rerankModel: RERANKER } });
    assert.equal(anonymous.status, 401);
    // Tenant B naming A's collection with a reranker: 404, and no rerank call is made.
    const calls = reranks();
    const asB = await search({ query: 'harbour', collectionIds: [collectionId] }, world.b.key.key);
    assert.equal(asB.status, 404, asB.text);
    assert.equal(reranks(), calls);
  });
});
