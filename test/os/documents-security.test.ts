// Every document route's security cases: another tenant's ids are 404 (uploads
// included, multipart too), no credential is 401, a member reads but never writes,
// malformed ids are 404 and malformed bodies a 400 naming the field.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { newId } from '../../src/platform/ids.js';
import { uploadFiles } from './documents-support.js';

describe('os documents: who may do what', () => {
  let gw: TestGateway;
  let world: World;
  let memberA: string;
  let keyA: string;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'documents-security');
    memberA = world.a.member.token;
    keyA = world.a.key.key;
  });
  after(() => gw.close());

  async function newCollection(name = 'Manuals'): Promise<{ workspaceId: string; collectionId: string }> {
    const ws = await gw.request('POST', '/api/os/workspaces', { apiKey: keyA, json: { name } });
    assert.equal(ws.status, 201, ws.text);
    const col = await gw.request('POST', `/api/os/workspaces/${ws.body.id}/collections`, { apiKey: keyA, json: { name } });
    assert.equal(col.status, 201, col.text);
    return { workspaceId: ws.body.id, collectionId: col.body.id };
  }
  const storedRows = async (collectionId: string) =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents WHERE collection_id = $1', [collectionId]))[0]!.n;

  it("never shows, fills or deletes another tenant's collections and documents", async () => {
    const { workspaceId, collectionId } = await newCollection('Secret');
    const doc = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 's.txt', text: 'secret' },
    });
    for (const credential of [{ token: world.b.admin.token }, { apiKey: world.b.key.key }]) {
      for (const [method, url, json] of [
        ['POST', `/api/os/collections/${collectionId}/documents`, { name: 'x.txt', text: 'pwned' }],
        ['POST', `/api/os/workspaces/${workspaceId}/documents`, { name: 'x.txt', text: 'pwned' }],
        ['GET', `/api/os/collections/${collectionId}/documents`],
        ['GET', `/api/os/documents/${doc.body.id}`],
        ['GET', `/api/os/documents/${doc.body.id}/chunks`],
        ['DELETE', `/api/os/documents/${doc.body.id}`],
      ] as const) {
        const answer = await gw.request(method, url, { ...credential, ...(json ? { json } : {}) });
        assert.equal(answer.status, 404, `${method} ${url} by tenant B`);
      }
      const multipart = await uploadFiles(gw, `/api/os/collections/${collectionId}/documents`, credential, [
        { name: 'x.txt', content: 'pwned' },
      ]);
      assert.equal(multipart.status, 404);
    }
    assert.equal(await storedRows(collectionId), 1);
  });

  it('needs a credential for every route, and the admin role or a key to upload or delete', async () => {
    const { workspaceId, collectionId } = await newCollection();
    const doc = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'c.txt', text: 'cred' },
    });
    const routes = [
      ['POST', `/api/os/collections/${collectionId}/documents`, { name: 'm.txt', text: 'member' }],
      ['POST', `/api/os/workspaces/${workspaceId}/documents`, { name: 'm.txt', text: 'member' }],
      ['GET', `/api/os/collections/${collectionId}/documents`],
      ['GET', `/api/os/documents/${doc.body.id}`],
      ['GET', `/api/os/documents/${doc.body.id}/chunks`],
      ['DELETE', `/api/os/documents/${doc.body.id}`],
    ] as const;
    for (const [method, url, json] of routes) {
      const none = await gw.request(method, url, json ? { json } : {});
      assert.equal(none.status, 401, `${method} ${url} without a credential`);
      const member = await gw.request(method, url, { token: memberA, ...(json ? { json } : {}) });
      assert.equal(member.status, method === 'GET' ? 200 : 403, `${method} ${url} by a member`);
    }
    const multipart = await uploadFiles(gw, `/api/os/collections/${collectionId}/documents`, { token: memberA }, [
      { name: 'x.txt', content: 'no' },
    ]);
    assert.equal(multipart.status, 403);
    assert.equal(await storedRows(collectionId), 1);
  });

  it('answers 404 to malformed or unknown ids and 400 naming the field to malformed bodies', async () => {
    const { collectionId } = await newCollection();
    for (const url of ['/api/os/documents/nope', `/api/os/documents/${newId('document')}`, `/api/os/documents/${collectionId}`]) {
      assert.equal((await gw.request('GET', url, { apiKey: keyA })).status, 404, url);
      assert.equal((await gw.request('GET', `${url}/chunks`, { apiKey: keyA })).status, 404, url);
      assert.equal((await gw.request('DELETE', url, { apiKey: keyA })).status, 404, url);
    }
    for (const url of ['/api/os/collections/nope/documents', `/api/os/collections/${newId('collection')}/documents`]) {
      assert.equal((await gw.request('GET', url, { apiKey: keyA })).status, 404, url);
      assert.equal((await gw.request('POST', url, { apiKey: keyA, json: { name: 'a', text: 'b' } })).status, 404, url);
    }
    assert.equal(
      (await gw.request('POST', '/api/os/workspaces/ws_x/documents', { apiKey: keyA, json: { name: 'a', text: 'b' } })).status,
      404,
    );
    const path = `/api/os/collections/${collectionId}/documents`;
    for (const [json, field] of [
      [{ text: 'no name' }, 'name'],
      [{ name: 'a.txt' }, 'text'],
      [{ name: ' ', text: 'x' }, 'name'],
      [{ name: 'a.txt', text: 5 }, 'text'],
      [{ name: 'a.txt', text: 'x\u0000y' }, 'text'],
    ] as const) {
      const answer = await gw.request('POST', path, { apiKey: keyA, json });
      assert.equal(answer.status, 400, JSON.stringify(json));
      assert.equal(answer.body.errors[0].field, field, JSON.stringify(json));
    }
    const plain = await gw.request('POST', path, { apiKey: keyA, body: 'just text', headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 400);
    const noBoundary = await gw.request('POST', path, { apiKey: keyA, body: 'x', headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(noBoundary.status, 400, noBoundary.text);
    const truncated = await gw.request('POST', path, {
      apiKey: keyA,
      body: '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunfinished',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
    });
    assert.equal(truncated.status, 400, truncated.text);
    assert.equal(await storedRows(collectionId), 0);
  });
});
