// The built-in embedder prepares itself from the server's start (converting its word
// vectors once per data dir takes 10-30 s, minutes on a busy machine), and says so
// meanwhile: a document waits at stage "preparing_embedder", POST /embeddings answers
// 503 with Retry-After at once instead of hanging, search runs on text alone and says
// why, /health tells the state. The preparation is held open by the test (the gateway's
// `holdBuiltInEmbedder` seam), so nothing here depends on how fast a conversion runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { usageRows } from '../llm/chat-support.js';

const MODEL = 'gateway-word-vectors-en';

function deferred() {
  let release!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  promise.catch(() => {});
  return { promise, release, fail };
}

describe('built-in embedder preparation', () => {
  let gw: TestGateway;
  let world: World;
  const hold = deferred();
  const key = () => ({ apiKey: world.a.key.key });
  const embed = (input: unknown) => gw.request('POST', '/api/llm/v1/embeddings', { ...key(), json: { model: MODEL, input } });

  before(async () => {
    gw = await startGateway({}, { holdBuiltInEmbedder: hold.promise });
    world = await seedWorld(gw, 'embedder-prep');
  });
  after(async () => {
    hold.release();
    await gw?.close();
  });

  it('starts with the server, before any request needs it, and /health says it is preparing', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is off');
    // No document, no embedding request and no search has been made: the start alone began it.
    assert.equal(gw.ctx.os.builtInEmbedder()?.state, 'preparing');
    const health = await gw.request('GET', '/health');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body.embedder, { model: MODEL, status: 'preparing' });
    assert.equal(health.body.status, 'ok', 'preparing is not a fault');
  });

  it('shows a document waiting at stage "preparing_embedder", answers embeddings with a 503 and Retry-After at once, searches by text, then catches up', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is off');
    const workspaceId = (await gw.request('POST', '/api/os/workspaces', { ...key(), json: { name: 'Early' } })).body.id;
    const uploaded = await gw.request('POST', `/api/os/workspaces/${workspaceId}/documents`, {
      ...key(),
      json: { name: 'ferry.md', text: '# Ferry\n\nThe ferry to the island leaves from pier nine at dawn.' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    const documentOf = async () => (await gw.request('GET', `/api/os/documents/${uploaded.body.id}`, key())).body;
    await eventually('the document waits for the embedder', async () => (await documentOf()).stage === 'preparing_embedder', 60_000);
    const waiting = await documentOf();
    assert.equal(waiting.status, 'processing');
    assert.equal(waiting.error, null);

    // The preparation is held open for as long as this test likes: an answer at all proves it did not wait.
    const refused = await embed('the ferry leaves at dawn');
    assert.equal(refused.status, 503, refused.text);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, `Retry-After: ${refused.headers.get('retry-after')}`);
    assert.match(refused.body.detail, /gateway-word-vectors-en is (being prepared|loading)/);
    assert.equal(refused.body.error.type, 'server_error', 'the OpenAI-shaped error the SDKs read');
    assert.equal(refused.body.error.code, 'service_unavailable');
    // Input it would refuse anyway is still a 400 naming the field, not a 503.
    assert.equal((await gw.request('POST', '/api/llm/v1/embeddings', { ...key(), json: { model: MODEL, input: [[1, 2]] } })).status, 400);

    const early = await gw.request('POST', '/api/os/search', {
      ...key(),
      json: { query: 'When does the ferry leave?', workspaceIds: [workspaceId] },
    });
    assert.equal(early.status, 200, early.text);
    assert.equal(early.body.retrieval.mode, 'lexical');
    assert.match(early.body.retrieval.note, /gateway-word-vectors-en is still being prepared/);

    hold.release();
    await eventually('the document is ready', async () => (await documentOf()).status === 'ready', 60_000);
    const ready = await documentOf();
    assert.equal(ready.stage, null);
    assert.ok(ready.chunkCount >= 1);

    const answered = await embed('the ferry leaves at dawn');
    assert.equal(answered.status, 200, answered.text);
    assert.equal(answered.body.data[0].embedding.length, 100);
    assert.deepEqual((await gw.request('GET', '/health')).body.embedder, { model: MODEL, status: 'ready' });
    const later = await gw.request('POST', '/api/os/search', {
      ...key(),
      json: { query: 'When does the ferry leave?', workspaceIds: [workspaceId] },
    });
    assert.equal(later.body.retrieval.mode, 'hybrid');
    assert.equal(later.body.retrieval.note, undefined);
    assert.match(later.body.data[0].content, /pier nine/);

    // The log says when it is ready (and, on a first start, how far the conversion is).
    const lines = gw
      .logs()
      .split('\n')
      .filter((line) => line.includes('built-in embedder'));
    assert.ok(
      lines.some((line) => /gateway-word-vectors-en ready, \d+ words/.test(line)),
      lines.join('\n'),
    );
    assert.ok(lines.length <= 6, `a few lines, not hundreds: ${lines.length}`);
  });

  it('records the refused embedding requests as unavailable usage', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is off');
    const rows = (await usageRows(gw, world.a.tenantId)).filter((r) => r.endpoint === 'embeddings' && r.model === MODEL);
    assert.deepEqual(
      rows.map((r) => r.status),
      ['unavailable', 'ok'],
      'the 503 and the answer after it; the 400 for bad input is no use of the model',
    );
  });
});

describe('built-in embedder preparation that fails', () => {
  let gw: TestGateway;
  let world: World;

  before(async () => {
    const hold = deferred();
    hold.fail(new Error('the word-vector package is missing'));
    gw = await startGateway({}, { holdBuiltInEmbedder: hold.promise });
    world = await seedWorld(gw, 'embedder-fail');
  });
  after(() => gw?.close());

  it('is reported by /health (degraded) and in the log, and embeddings answer 503 without a Retry-After', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is off');
    await eventually('the preparation has failed', () => gw.ctx.os.builtInEmbedder()?.state === 'failed');
    const health = await gw.request('GET', '/health');
    assert.equal(health.body.status, 'degraded');
    assert.deepEqual(health.body.embedder, { model: MODEL, status: 'failed' });
    await eventually('the failure is logged', () =>
      /preparing gateway-word-vectors-en failed: the word-vector package is missing/.test(gw.logs()),
    );

    const refused = await gw.request('POST', '/api/llm/v1/embeddings', { apiKey: world.a.key.key, json: { model: MODEL, input: 'x' } });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.headers.get('retry-after'), null, 'retrying will not help: nothing is coming');
    assert.match(refused.body.detail, /could not be prepared; the server's log says why/);
    assert.doesNotMatch(refused.body.detail, /package is missing/, 'the cause stays in the log');
  });

  it('keeps a document waiting for it queued for a retry, its error naming the embedder but not the cause', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is off');
    const key = { apiKey: world.a.key.key };
    const workspaceId = (await gw.request('POST', '/api/os/workspaces', { ...key, json: { name: 'Failing' } })).body.id;
    const uploaded = await gw.request('POST', `/api/os/workspaces/${workspaceId}/documents`, {
      ...key,
      json: { name: 'note.md', text: '# Note\n\nThe archive closes early on Fridays.' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    let doc: any;
    await eventually(
      'the first attempt has failed',
      async () => {
        doc = (await gw.request('GET', `/api/os/documents/${uploaded.body.id}`, key)).body;
        return doc.error !== null;
      },
      60_000,
    );
    assert.equal(doc.status, 'queued', 'a retry is due: a restart may well prepare it');
    assert.match(doc.error, /^Attempt 1 failed, will retry: gateway-word-vectors-en could not be prepared; the server's log says why\.$/);
  });
});
