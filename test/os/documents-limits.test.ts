// Upload size limits, on a gateway configured with small ones: a file over the limit
// is refused whole (413, nothing stored) and cut off while it streams in.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { streamLargeUpload, uploadFiles } from './documents-support.js';

describe('os documents: size limits', () => {
  const LIMIT = 4096;
  let gw: TestGateway;
  let keyA: string;
  let collectionId: string;

  before(async () => {
    gw = await startGateway({ GATEWAY_UPLOAD_MAX_BYTES: String(LIMIT), GATEWAY_UPLOAD_MAX_FILES: '3' });
    const world = await seedWorld(gw, 'limits');
    keyA = world.a.key.key;
    const ws = await gw.request('POST', '/api/os/workspaces', { apiKey: keyA, json: { name: 'limits' } });
    collectionId = (await gw.request('POST', `/api/os/workspaces/${ws.body.id}/collections`, { apiKey: keyA, json: { name: 'c' } })).body
      .id;
  });
  after(() => gw.close());

  const stored = async () =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents WHERE collection_id = $1', [collectionId]))[0]!.n;

  it('takes a file of exactly the limit, refuses one byte more with 413 and stores nothing of that request', async () => {
    const path = `/api/os/collections/${collectionId}/documents`;
    const exact = await uploadFiles(gw, path, { apiKey: keyA }, [{ name: 'exact.txt', content: 'e'.repeat(LIMIT) }]);
    assert.equal(exact.status, 202, exact.text);
    const over = await uploadFiles(gw, path, { apiKey: keyA }, [
      { name: 'small.txt', content: 'fits' },
      { name: 'over.txt', content: 'o'.repeat(LIMIT + 1) },
    ]);
    assert.equal(over.status, 413, over.text);
    assert.equal(over.body.code, 'PAYLOAD_TOO_LARGE');
    const text = await gw.request('POST', path, { apiKey: keyA, json: { name: 't.txt', text: 't'.repeat(LIMIT + 1) } });
    assert.equal(text.status, 413);
    const manyFiles = await uploadFiles(
      gw,
      path,
      { apiKey: keyA },
      [1, 2, 3, 4].map((i) => ({ name: `${i}.txt`, content: `file ${i}` })),
    );
    assert.equal(manyFiles.status, 413, manyFiles.text);
    assert.equal(await stored(), 1);
    // The connection was closed after each refusal; the gateway still answers.
    assert.equal((await gw.request('GET', `/api/os/collections/${collectionId}`, { apiKey: keyA })).status, 200);
  });

  it('cuts a huge upload off at the limit instead of reading it to the end', async () => {
    const size = 256 * 1024 ** 2;
    const answer = await streamLargeUpload(gw, `/api/os/collections/${collectionId}/documents`, keyA, size);
    assert.equal(answer.status, 413, JSON.stringify(answer.body));
    assert.equal(answer.body.code, 'PAYLOAD_TOO_LARGE');
    assert.ok(answer.sentBeforeAnswer < 16 * 1024 ** 2, `the server took ${answer.sentBeforeAnswer} bytes before answering`);
    console.log(
      `a ${size}-byte upload over a ${LIMIT}-byte limit: 413 after ${answer.sentBeforeAnswer} bytes sent, in ${answer.ms.toFixed(0)} ms`,
    );
    assert.equal(await stored(), 1);
    assert.equal((await gw.request('GET', '/health')).status, 200);
  });
});
