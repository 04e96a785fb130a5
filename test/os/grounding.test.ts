// Grounded answers end to end: documents uploaded through the API, ingested by the
// real runner (extraction on its worker thread, the built-in word vectors), then
// chat/completions with grounding fields, JSON and stream, against a fake engine
// that records the prompt it was given.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver, openStream } from '../llm/chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';

const HANDBOOK = `# Employee Handbook

## Annual leave

Every employee receives twenty-five days of paid annual leave per calendar year.
Unused leave may be carried over until the end of March of the following year.

## Expenses

Travel expenses are reimbursed within fourteen days when the receipt is uploaded to the finance portal.
`;

const PRICES = `product,price_eur,warranty_years
Falcon router,249,3
Heron switch,129,2
Osprey access point,89,1
`;

describe('grounded chat/completions', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  let world: World;
  let workspaceId: string;
  let emptyWorkspaceId: string;

  const lastPrompt = () => [...engine.requests].reverse().find((r) => r.path === '/v1/chat/completions')!.body.messages;
  const chat = (json: Record<string, unknown>, apiKey = world.a.key.key) =>
    gw.request('POST', CHAT, { apiKey, json: { model: 'chat-model', max_tokens: 64, ...json } });
  const ask = (content: string, extra: Record<string, unknown> = {}) =>
    chat({ messages: [{ role: 'user', content }], workspaceIds: [workspaceId], ...extra });

  async function upload(workspace: string, name: string, text: string) {
    const response = await gw.request('POST', `/api/os/workspaces/${workspace}/documents`, {
      apiKey: world.a.key.key,
      json: { name, text },
    });
    assert.equal(response.status, 202, response.text);
    return response.body;
  }
  async function ready(documentId: string) {
    await eventually(
      `document ${documentId} ready`,
      async () => {
        const doc = (await gw.request('GET', `/api/os/documents/${documentId}`, { apiKey: world.a.key.key })).body;
        assert.notEqual(doc.status, 'failed', doc.error);
        return doc.status === 'ready';
      },
      60_000,
    );
  }

  before(async () => {
    engine = await startFakeOpenAI({ models: ['chat-model'], reply: 'Twenty-five days [1].' });
    gw = await gatewayOver([engine]);
    world = await seedWorld(gw, 'grounding');
    const created = async (name: string) =>
      (await gw.request('POST', '/api/os/workspaces', { apiKey: world.a.key.key, json: { name } })).body.id as string;
    workspaceId = await created('Company');
    emptyWorkspaceId = await created('Empty');
    const handbook = await upload(workspaceId, 'handbook.md', HANDBOOK);
    const prices = await upload(workspaceId, 'prices.csv', PRICES);
    await ready(handbook.id);
    await ready(prices.id);
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('answers from the documents: the passage reaches the prompt as a numbered source and comes back as rag_snippets', async () => {
    const response = await ask('How many days of paid annual leave does every employee receive?');
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.rag_active, true);
    assert.equal(response.body.rag_status, 'active');
    const [first] = response.body.rag_snippets;
    assert.equal(first.documentName, 'handbook.md');
    assert.match(first.content, /twenty-five days of paid annual leave/);
    assert.equal(first.workspaceId, workspaceId);
    assert.equal(first.source.title, 'Employee Handbook');
    assert.deepEqual(first.source.headingPath?.at(-1), 'Annual leave');
    const prompt = lastPrompt();
    assert.equal(prompt[0].role, 'system');
    assert.match(prompt[0].content, /\[1\] Employee Handbook › .*Annual leave\n.*twenty-five days/s);
    assert.match(prompt[0].content, /Cite every source/);
    assert.equal(prompt.at(-1).content, 'How many days of paid annual leave does every employee receive?');
  });

  it('puts in front of the model exactly what /api/os/search returns for the same query and scope, in its order, abstaining alike', async () => {
    const sourcesOf = (system: string) => [...system.matchAll(/^\[(\d+)\] /gm)].length;
    for (const query of [
      'How many days of paid annual leave does every employee receive?',
      'how much vacation time do I get a year',
      'What is the warranty of the Osprey access point?',
      'Which volcano erupted in the Jurassic period?',
    ]) {
      const search = await gw.request('POST', '/api/os/search', { apiKey: world.a.key.key, json: { query, workspaceIds: [workspaceId] } });
      assert.equal(search.status, 200, search.text);
      const found = search.body.data.map((s: { id: string }) => s.id);

      const completion = await ask(query);
      assert.deepEqual(
        completion.body.rag_snippets.map((s: { id: string }) => s.id),
        found,
        query,
      );
      assert.equal(completion.body.rag_status, search.body.status, query);
      const prompt = lastPrompt();
      assert.equal(prompt[0].role === 'system' ? sourcesOf(prompt[0].content) : 0, found.length, query);

      const response = await gw.request('POST', '/api/llm/v1/responses', {
        apiKey: world.a.key.key,
        json: { model: 'chat-model', input: query, workspace_ids: [workspaceId] },
      });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.rag_status, search.body.status, query);
      const system = lastPrompt()[0];
      assert.equal(system.role === 'system' ? sourcesOf(system.content) : 0, found.length, query);
      for (const [i, snippet] of search.body.data.entries())
        assert.ok(system.content.includes(`[${i + 1}] ${snippet.source.title}`), `${query}: source ${i + 1}`);
    }
  });

  it('finds a table row with its header', async () => {
    const response = await ask('What is the warranty of the Heron switch?');
    assert.equal(response.status, 200, response.text);
    const snippet = response.body.rag_snippets.find((s: any) => s.documentName === 'prices.csv');
    assert.ok(snippet, JSON.stringify(response.body.rag_snippets));
    assert.match(snippet.content, /warranty_years/);
    assert.match(snippet.content, /Heron switch/);
  });

  it('keeps a system prompt of the caller and adds the sources to it', async () => {
    const response = await chat({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'When are travel expenses reimbursed?' },
      ],
      collectionIds: [
        (await gw.request('GET', `/api/os/workspaces/${workspaceId}/collections`, { apiKey: world.a.key.key })).body.data[0].id,
      ],
    });
    assert.equal(response.status, 200, response.text);
    const prompt = lastPrompt();
    assert.equal(prompt.filter((m: any) => m.role === 'system').length, 1);
    assert.match(prompt[0].content, /^You are terse\.\n\n.*fourteen days/s);
  });

  it('says why nothing grounded the answer: no_matches, no_documents; the prompt then has no sources', async () => {
    const unanswerable = await ask('Which volcano erupted in the Jurassic period?');
    assert.equal(unanswerable.status, 200, unanswerable.text);
    assert.deepEqual(
      [unanswerable.body.rag_active, unanswerable.body.rag_status, unanswerable.body.rag_snippets],
      [false, 'no_matches', []],
    );
    assert.equal(lastPrompt()[0].role, 'user');

    const empty = await chat({ messages: [{ role: 'user', content: 'annual leave?' }], workspaceIds: [emptyWorkspaceId] });
    assert.deepEqual([empty.body.rag_active, empty.body.rag_status], [false, 'no_documents']);

    const ungrounded = await chat({ messages: [{ role: 'user', content: 'annual leave?' }] });
    assert.deepEqual([ungrounded.body.rag_active, ungrounded.body.rag_status, ungrounded.body.rag_snippets], [false, 'inactive', null]);
  });

  it('streams the same grounding in the metadata frame', async () => {
    const stream = await openStream(
      gw,
      CHAT,
      {
        model: 'chat-model',
        stream: true,
        messages: [{ role: 'user', content: 'How much annual leave is there?' }],
        workspaceIds: [workspaceId],
      },
      { authorization: `Bearer ${world.a.key.key}` },
    );
    assert.equal(stream.status, 200);
    const items = await stream.end();
    const metadata = JSON.parse((items[0] as { data: string }).data);
    assert.equal(metadata.object, 'rag_metadata');
    assert.equal(metadata.active, true);
    assert.equal(metadata.status, 'active');
    assert.equal(metadata.snippet_count, metadata.rag_snippets.length);
    assert.match(metadata.rag_snippets[0].content, /annual leave/);
    assert.equal(metadata.choices, undefined);

    // The chunk mode carries the same metadata under rag_* names.
    const chunked = await openStream(
      gw,
      CHAT,
      {
        model: 'chat-model',
        stream: true,
        stream_options: { metadata_frame: 'chunk' },
        messages: [{ role: 'user', content: 'How much annual leave is there?' }],
        workspaceIds: [workspaceId],
      },
      { authorization: `Bearer ${world.a.key.key}` },
    );
    const chunk = JSON.parse(((await chunked.end())[0] as { data: string }).data);
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.deepEqual(chunk.choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    assert.deepEqual(
      [chunk.rag_active, chunk.rag_status, chunk.rag_snippet_count, chunk.rag_snippets],
      [true, 'active', metadata.snippet_count, metadata.rag_snippets],
    );
  });

  it("never grounds in another tenant's documents: every id of tenant A is a 404 to tenant B, before any engine call", async () => {
    const collectionId = (await gw.request('GET', `/api/os/workspaces/${workspaceId}/collections`, { apiKey: world.a.key.key })).body
      .data[0].id;
    const documentId = (await gw.request('GET', `/api/os/collections/${collectionId}/documents`, { apiKey: world.a.key.key })).body.data[0]
      .id;
    const calls = engine.workRequests(); // not engine.requests: the node's health check may land meanwhile
    for (const grounding of [
      { workspaceIds: [workspaceId] },
      { collectionIds: [collectionId] },
      { ragScopes: [{ workspaceId }] },
      { ragScopes: [{ collectionIds: [collectionId] }] },
      { ragScopes: [{ documentIds: [documentId] }] },
    ]) {
      const response = await chat({ messages: [{ role: 'user', content: 'annual leave' }], ...grounding }, world.b.key.key);
      assert.equal(response.status, 404, `${JSON.stringify(grounding)}: ${response.text}`);
      assert.equal(response.body.code, 'NOT_FOUND');
      assert.doesNotMatch(response.text, /handbook|leave/i);
    }
    assert.equal(engine.workRequests(), calls, 'no engine call for a refused grounding');
  });

  it('narrows to documents with ragScopes and applies its minScore', async () => {
    const collectionId = (await gw.request('GET', `/api/os/workspaces/${workspaceId}/collections`, { apiKey: world.a.key.key })).body
      .data[0].id;
    const docs = (await gw.request('GET', `/api/os/collections/${collectionId}/documents`, { apiKey: world.a.key.key })).body.data;
    const prices = docs.find((d: any) => d.name === 'prices.csv');
    const narrowed = await chat({ messages: [{ role: 'user', content: 'annual leave days' }], ragScopes: [{ documentIds: [prices.id] }] });
    assert.equal(narrowed.status, 200, narrowed.text);
    assert.ok(narrowed.body.rag_snippets.every((s: any) => s.documentId === prices.id));
    const question = 'How many days of paid annual leave does every employee receive?';
    const loose = await chat({ messages: [{ role: 'user', content: question }], ragScopes: [{ workspaceId }] });
    assert.equal(loose.body.rag_active, true, loose.text);
    const best = Math.max(...loose.body.rag_snippets.map((s: any) => s.score));
    const above = await chat({ messages: [{ role: 'user', content: question }], ragScopes: [{ workspaceId, minScore: best - 0.001 }] });
    assert.ok(above.body.rag_snippets.length >= 1 && above.body.rag_snippets.every((s: any) => s.score >= best - 0.001), above.text);
    // "many" is in no document, so no passage covers the whole question: a floor just above the best drops all.
    assert.ok(best < 1, `best score ${best}`);
    const strict = await chat({ messages: [{ role: 'user', content: question }], ragScopes: [{ workspaceId, minScore: best + 0.001 }] });
    assert.deepEqual([strict.body.rag_active, strict.body.rag_status], [false, 'no_matches']);
  });

  it('refuses malformed grounding fields with a 400 naming the field', async () => {
    for (const [grounding, field] of [
      [{ workspaceIds: 'ws' }, 'workspaceIds'],
      [{ ragScopes: [{ any: 'shape' }] }, 'ragScopes[0]'],
      [{ ragScopes: [{ workspaceId, topK: 0 }] }, 'ragScopes[0].topK'],
      [{ ragScopes: [{ workspaceId, minScore: 2 }] }, 'ragScopes[0].minScore'],
    ] as const) {
      const response = await chat({ messages: [{ role: 'user', content: 'x' }], ...grounding });
      assert.equal(response.status, 400, response.text);
      assert.ok(
        response.body.errors.some((e: any) => e.field.startsWith(field)),
        response.text,
      );
    }
  });
});
