// A collection embedded by a GGUF model on the built-in local engine (node-llama-cpp's
// embedding context): the tiny random-weight model the suite writes stands in for a
// bge-small or nomic-embed GGUF. Its vectors mean nothing, so this proves the path
// (ingestion embeds through the router, the collection learns the model's size, search
// embeds the query with it), not retrieval quality.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';

describe('a collection on a local GGUF embedding model', () => {
  let gw: TestGateway;
  let world: World;
  let modelsDir: string;

  before(async () => {
    modelsDir = mkdtempSync(path.join(TEST_TMP, 'models-'));
    writeTinyGguf(path.join(modelsDir, 'tiny-embed.gguf'), { seed: 5 });
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'on', GATEWAY_LOCAL_THREADS: '1', GATEWAY_MODELS_DIR: modelsDir });
    world = await seedWorld(gw, 'local-embed');
  });
  after(async () => {
    await gw?.close();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it('embeds the chunks and the query with the local model', async (t) => {
    if (!gw.ctx.vector) return t.skip('needs pgvector (vectors live in chunk_vectors)');
    const key = { apiKey: world.a.key.key };
    const workspaceId = (await gw.request('POST', '/api/os/workspaces', { ...key, json: { name: 'Local' } })).body.id;
    await eventually(
      'the local engine lists the model',
      async () => {
        const models = (await gw.request('GET', '/api/llm/v1/models', key)).body.data.map((m: { id: string }) => m.id);
        return models.includes('tiny-embed');
      },
      30_000,
    );
    const created = await gw.request('POST', `/api/os/workspaces/${workspaceId}/collections`, {
      ...key,
      json: { name: 'On the local engine', embeddingModel: 'tiny-embed' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.embedding, { model: 'tiny-embed', dimensions: null }, 'the size is learnt from the first vectors');
    const uploaded = await gw.request('POST', `/api/os/collections/${created.body.id}/documents`, {
      ...key,
      json: { name: 'tides.md', text: '# Tides\n\nThe harbour master posts the tide tables every Monday.' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    let doc: any;
    await eventually(
      'the document is ready',
      async () => {
        doc = (await gw.request('GET', `/api/os/documents/${uploaded.body.id}`, key)).body;
        assert.notEqual(doc.status, 'failed', doc.error);
        return doc.status === 'ready';
      },
      90_000,
    );
    const collection = (await gw.request('GET', `/api/os/collections/${created.body.id}`, key)).body;
    assert.deepEqual(collection.embedding, { model: 'tiny-embed', dimensions: 64 });
    const found = await gw.request('POST', '/api/os/search', {
      ...key,
      json: { query: 'Who posts the tide tables?', collectionIds: [created.body.id] },
    });
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(found.body.retrieval, { mode: 'hybrid', embedder: 'tiny-embed' });
    assert.match(found.body.data[0].content, /harbour master/);
  });
});
