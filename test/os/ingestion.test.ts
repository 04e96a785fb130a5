// Ingestion end to end: files of every supported type, built here, uploaded through
// the API, processed by the real runner (extraction on worker threads, the built-in
// word vectors), searchable afterwards; hostile files fail with a status and an error
// and the server stays up; a restart resumes a half-done document; a collection on a
// node's embedding model and a change of embedder re-embed in the background.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from '../llm/chat-support.js';
import { malformedPdf, sampleDocx, samplePdf, zipBombDocx, sampleHtml, sampleJson, sampleText } from '../helpers/documents.js';
import { uploadFiles } from './documents-support.js';
import { reembedStep } from '../../src/areas/os/ingestion/reembed.js';

describe('ingestion', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  let world: World;
  let workspaceId: string;
  const key = () => ({ apiKey: world.a.key.key });

  const documentOf = async (id: string) => (await gw.request('GET', `/api/os/documents/${id}`, key())).body;
  async function settled(id: string): Promise<any> {
    let doc: any;
    await eventually(
      `document ${id} ready or failed`,
      async () => {
        doc = await documentOf(id);
        return doc.status === 'ready' || doc.status === 'failed';
      },
      90_000,
    );
    return doc;
  }
  const search = async (query: string, extra: Record<string, unknown> = {}) => {
    const response = await gw.request('POST', '/api/os/search', { ...key(), json: { query, workspaceIds: [workspaceId], ...extra } });
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  before(async () => {
    engine = await startFakeOpenAI({ models: ['chat-model', 'embed-model'] });
    gw = await gatewayOver([engine]);
    world = await seedWorld(gw, 'ingestion');
    workspaceId = (await gw.request('POST', '/api/os/workspaces', { ...key(), json: { name: 'Library' } })).body.id;
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('ingests every supported type, built in the test, and finds each answer only in its own file', async () => {
    const files = [
      {
        name: 'safety.pdf',
        content: await samplePdf([
          ['# Forklift Safety', 'Operators must wear a high-visibility vest inside warehouse Delta.'],
          ['## Charging', 'Batteries are charged in bay seventeen after every second shift.'],
        ]),
      },
      {
        name: 'onboarding.docx',
        content: await sampleDocx([
          { heading: 'Onboarding' },
          { heading: 'First week', level: 2 },
          { paragraph: 'New colleagues receive their badge from the reception desk on Tuesday morning.' },
          {
            table: [
              ['Tool', 'Owner'],
              ['Wiki', 'Priya'],
              ['Ticketing', 'Olusegun'],
            ],
          },
        ]),
      },
      { name: 'pump.html', content: sampleHtml() },
      { name: 'minutes.txt', content: sampleText() },
      { name: 'service.json', content: sampleJson() },
      {
        name: 'parts.csv',
        content: Buffer.from('part,supplier,lead_time_days\nflux capacitor,Brown Labs,88\nwarp coil,Cochrane Works,12\n'),
      },
      { name: 'notes.md', content: Buffer.from('# Release notes\n\n## Version 7\n\nThe quantum toaster now supports sourdough.\n') },
    ];
    const upload = await uploadFiles(gw, `/api/os/workspaces/${workspaceId}/documents`, key(), files);
    assert.equal(upload.status, 202, upload.text);
    const docs = await Promise.all(upload.body.data.map((d: any) => settled(d.id)));
    for (const doc of docs) {
      assert.equal(doc.status, 'ready', `${doc.name}: ${doc.error}`);
      assert.ok(doc.chunkCount >= 1, doc.name);
      assert.equal(doc.stage, null);
    }
    const expectations: [string, string, RegExp][] = [
      ['Which vest do forklift operators wear in warehouse Delta?', 'safety.pdf', /high-visibility vest/],
      ['Where are forklift batteries charged?', 'safety.pdf', /bay seventeen/],
      ['Where do new colleagues receive their badge?', 'onboarding.docx', /reception desk/],
      ['Who is the owner of the ticketing tool?', 'onboarding.docx', /Ticketing.*Olusegun/],
      ['What is the nominal pressure of the Zephyr-9 pump?', 'pump.html', /42 bar/],
      ['What budget did the board approve?', 'minutes.txt', /1\.2 million/],
      ['Which team owns the billing service?', 'service.json', /Team Orca/],
      ['What is the lead time of the warp coil?', 'parts.csv', /warp coil.*12/],
      ['What does the quantum toaster support?', 'notes.md', /sourdough/],
    ];
    for (const [question, document, content] of expectations) {
      const result = await search(question, { topK: 3 });
      assert.equal(result.status, 'active', question);
      assert.equal(result.data[0]?.documentName, document, `${question}: ${JSON.stringify(result.data.map((s: any) => s.documentName))}`);
      assert.match(result.data[0].content, content, question);
    }
    // The PDF's chunk knows its page and the DOCX's its heading path.
    const charging = (await search('Where are forklift batteries charged?', { topK: 1 })).data[0];
    assert.equal(charging.source.page, 2);
    const badge = (await search('Where do new colleagues receive their badge?', { topK: 1 })).data[0];
    assert.deepEqual(badge.source.headingPath, ['Onboarding', 'First week']);

    // And a grounded answer puts the PDF's passage into the engine's prompt.
    const answer = await gw.request('POST', '/api/llm/v1/chat/completions', {
      ...key(),
      json: {
        model: 'chat-model',
        messages: [{ role: 'user', content: 'Where are forklift batteries charged?' }],
        workspaceIds: [workspaceId],
      },
    });
    assert.equal(answer.status, 200, answer.text);
    const prompt = [...engine.requests].reverse().find((r) => r.path === '/v1/chat/completions')!.body.messages;
    assert.match(prompt[0].content, /\[1\] .*\(page 2\)\n.*bay seventeen/s);
  });

  it('fails hostile files with a status and an error, stores nothing of them, and keeps serving', async () => {
    const upload = await uploadFiles(gw, `/api/os/workspaces/${workspaceId}/documents`, key(), [
      { name: 'broken.pdf', content: malformedPdf() },
      { name: 'bomb.docx', content: await zipBombDocx(64 * 1024 ** 2) },
    ]);
    assert.equal(upload.status, 202, upload.text);
    const [broken, bomb] = await Promise.all(upload.body.data.map((d: any) => settled(d.id)));
    assert.equal(broken.status, 'failed');
    assert.match(broken.error, /pdf/i);
    assert.equal(bomb.status, 'failed');
    assert.match(bomb.error, /expand|large|limit/i);
    for (const doc of [broken, bomb]) {
      assert.equal(doc.chunkCount, 0);
      const chunks = await gw.request('GET', `/api/os/documents/${doc.id}/chunks`, key());
      assert.deepEqual(chunks.body.data, []);
    }
    assert.equal((await gw.request('GET', '/health')).status, 200);
  });

  it('a PDF named .txt is read as the PDF it is', async () => {
    const upload = await uploadFiles(gw, `/api/os/workspaces/${workspaceId}/documents`, key(), [
      { name: 'disguised.txt', content: await samplePdf([['The disguised file mentions the aubergine harvest.']]) },
    ]);
    const doc = await settled(upload.body.data[0].id);
    assert.deepEqual([doc.status, doc.mediaType], ['ready', 'application/pdf']);
    assert.match((await search('aubergine harvest')).data[0].content, /aubergine harvest/);
  });

  it('re-embeds a collection changing embedder one worker at a time: no batch is embedded twice', async (t) => {
    if (!gw.ctx.vector) return t.skip('needs pgvector (vectors live in chunk_vectors)');
    const created = await gw.request('POST', `/api/os/workspaces/${workspaceId}/collections`, { ...key(), json: { name: 'Once' } });
    assert.equal(created.status, 201, created.text);
    const collectionId = created.body.id;
    const text = Array.from({ length: 6 }, (_, i) => `## Shelf ${i}\n\n${`Shelf ${i} holds the atlases of region ${i}. `.repeat(40)}`).join(
      '\n\n',
    );
    const uploaded = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      ...key(),
      json: { name: 'atlas.md', text },
    });
    const doc = await settled(uploaded.body.id);
    assert.equal(doc.status, 'ready', doc.error);
    assert.ok(doc.chunkCount > 1, `${doc.chunkCount} chunks`);

    // The gateway's own workers stop (the next test restarts it); two workers (of any replica) are played here.
    await gw.ctx.os.ingestion.close();
    const patched = await gw.request('PATCH', `/api/os/collections/${collectionId}`, { ...key(), json: { embeddingModel: 'embed-model' } });
    assert.equal(patched.status, 200, patched.text);
    const embedded: string[] = [];
    const deps = {
      db: gw.ctx.db,
      embedders: {
        embed: async (_tenantId: string, _model: string, texts: string[]) => {
          embedded.push(...texts);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return texts.map(() => Array.from({ length: 16 }, (_, i) => (i + 1) / 16));
        },
      },
    };
    const [first, second] = await Promise.all([reembedStep(deps), reembedStep(deps)]);
    assert.deepEqual([first, second].sort(), [false, true], 'one worker claimed the collection, the other found it taken');
    while (await reembedStep(deps));
    assert.equal(embedded.length, doc.chunkCount, 'each chunk embedded once');
    const collection = (await gw.request('GET', `/api/os/collections/${collectionId}`, key())).body;
    assert.deepEqual([collection.pendingEmbeddingModel, collection.embedding?.model], [null, 'embed-model']);
  });

  it('resumes a document a crashed run left half-done when the server starts again', async () => {
    // What a crash mid-ingestion leaves: the document claimed (processing, a lease still running), no chunks.
    await gw.ctx.os.ingestion.close();
    const uploaded = await gw.request('POST', `/api/os/workspaces/${workspaceId}/documents`, {
      ...key(),
      json: { name: 'restart.md', text: '# Restart\n\nThe lighthouse keeper winds the clock every evening.' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    // On the embedded database the next start resumes it at once (no other process can hold it);
    // on PostgreSQL another replica might, so the lease decides: here one that has run out.
    const lease = gw.ctx.db.kind === 'embedded' ? "now() + interval '1 hour'" : "now() - interval '1 second'";
    await gw.ctx.db.query(
      `UPDATE documents SET status = 'processing', stage = 'embedding', attempts = 1, lease_until = ${lease} WHERE id = $1`,
      [uploaded.body.id],
    );
    gw = await gw.restart();
    const doc = await settled(uploaded.body.id);
    assert.equal(doc.status, 'ready', doc.error);
    assert.match((await search('Who winds the clock?')).data[0].content, /lighthouse keeper/);
  });

  it("embeds with a node's model when the collection names one, and re-embeds in the background when it changes", async (t) => {
    if (!gw.ctx.vector) return t.skip('needs pgvector (vectors live in chunk_vectors)');
    const created = await gw.request('POST', `/api/os/workspaces/${workspaceId}/collections`, {
      ...key(),
      json: { name: 'On the node', embeddingModel: 'embed-model' },
    });
    assert.equal(created.status, 201, created.text);
    const collectionId = created.body.id;
    const uploaded = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      ...key(),
      json: { name: 'node.md', text: '# Node\n\nThe observatory opens at dusk on clear nights.' },
    });
    assert.equal((await settled(uploaded.body.id)).status, 'ready');
    const embedded = engine.requests.filter((r) => r.path === '/v1/embeddings');
    assert.ok(
      embedded.some((r) => JSON.stringify(r.body.input).includes('observatory')),
      'the chunk went to the node',
    );
    const collection = (await gw.request('GET', `/api/os/collections/${collectionId}`, key())).body;
    assert.deepEqual(collection.embedding, { model: 'embed-model', dimensions: 16 });
    const found = await search('When does the observatory open?', { collectionIds: [collectionId], workspaceIds: undefined });
    assert.deepEqual(found.retrieval, { mode: 'hybrid', embedder: 'embed-model' });

    // Switching to the built-in embedder: the new vectors are filled in, then swapped in.
    const patched = await gw.request('PATCH', `/api/os/collections/${collectionId}`, {
      ...key(),
      json: { embeddingModel: 'gateway-word-vectors-en' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.pendingEmbeddingModel, 'gateway-word-vectors-en');
    await eventually(
      'the embedder switched over',
      async () => {
        const c = (await gw.request('GET', `/api/os/collections/${collectionId}`, key())).body;
        return c.pendingEmbeddingModel === null && c.embedding?.model === 'gateway-word-vectors-en';
      },
      30_000,
    );
    const after = (await gw.request('GET', `/api/os/collections/${collectionId}`, key())).body;
    assert.deepEqual(after.embedding, { model: 'gateway-word-vectors-en', dimensions: 100 });
    const vectors = await gw.ctx.db.query<{ embedder: string }>('SELECT DISTINCT embedder FROM chunk_vectors WHERE collection_id = $1', [
      collectionId,
    ]);
    assert.deepEqual(
      vectors.map((v) => v.embedder),
      ['gateway-word-vectors-en'],
      'the old vectors are gone',
    );
  });

  it('retries a document whose embedding node is down and ends with a clear error', async (t) => {
    if (!gw.ctx.vector) return t.skip('needs pgvector (no embedder without it)');
    const created = await gw.request('POST', `/api/os/workspaces/${workspaceId}/collections`, {
      ...key(),
      json: { name: 'Flaky', embeddingModel: 'embed-model' },
    });
    engine.behaviour.status = 503;
    try {
      const uploaded = await gw.request('POST', `/api/os/collections/${created.body.id}/documents`, {
        ...key(),
        json: { name: 'flaky.md', text: 'The ferry leaves at noon.' },
      });
      await eventually(
        'a retry is scheduled',
        async () => {
          const doc = await documentOf(uploaded.body.id);
          return doc.status === 'queued' && /will retry/.test(doc.error ?? '');
        },
        30_000,
      );
    } finally {
      delete engine.behaviour.status;
    }
  });
});
