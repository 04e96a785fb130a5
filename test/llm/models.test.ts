// GET /api/llm/v1/models: OpenAI's list shape, `auto` first, and per tenant: its
// allowed models and the nodes that serve it. Also through the official SDK.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, seedUser, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';

describe('llm models', () => {
  let gw: TestGateway;
  let shared: FakeEngine;
  let privateA: FakeEngine;
  let tenantA: string, adminA: string, keyA: string;
  let tenantB: string, adminB: string, memberB: string;
  let platform: string;

  const ids = async (credential: { token?: string; apiKey?: string }) => {
    const response = await gw.request('GET', '/api/llm/v1/models', credential);
    assert.equal(response.status, 200, response.text);
    return response.body.data.map((m: { id: string }) => m.id);
  };

  before(async () => {
    shared = await startFakeOpenAI({ models: ['m-one', 'm-two', 'm-three'] });
    privateA = await startFakeOpenAI({ models: ['private-a'] });
    gw = await startGateway({ GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: shared.url }]), GATEWAY_LOCAL_ENGINE: 'off' });
    const world = await seedWorld(gw, 'models');
    platform = world.platform.admin.token;
    tenantA = world.a.tenantId;
    tenantB = world.b.tenantId;
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    memberB = await tokenFor(gw, (await seedUser(gw, tenantB)).id, tenantB);
    keyA = world.a.key.key;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([shared?.close(), privateA?.close()]);
  });

  const builtIn = () => (gw.ctx.vector ? ['gateway-word-vectors-en'] : []);

  it('lists `auto` first, then the models of the nodes, in the OpenAI list shape', async () => {
    const response = await gw.request('GET', '/api/llm/v1/models', { apiKey: keyA });
    assert.equal(response.status, 200);
    assert.equal(response.body.object, 'list');
    const [auto, ...models] = response.body.data;
    assert.deepEqual(Object.keys(auto).sort(), ['created', 'id', 'object', 'owned_by']);
    assert.equal(auto.id, 'auto');
    assert.equal(auto.owned_by, 'gateway');
    assert.deepEqual(
      models.map((m: { id: string }) => m.id),
      ['m-one', 'm-three', 'm-two', ...builtIn()],
    );
    // The built-in embedder comes last, says what it is, and only where vectors can be kept.
    if (gw.ctx.vector) {
      const embedder = models.at(-1);
      assert.equal(embedder.owned_by, 'gateway');
      assert.match(embedder.description, /word vectors.*English only.*Not a chat model/s);
    }
    for (const m of response.body.data) {
      assert.equal(m.object, 'model');
      assert.ok(Number.isInteger(m.created) && m.created > 0);
    }
    assert.deepEqual(await ids({ token: memberB }), ['auto', 'm-one', 'm-three', 'm-two', ...builtIn()], 'members and JWTs too');
    assert.equal((await gw.request('GET', '/api/llm/v1/models')).status, 401);
  });

  it("applies each tenant's allowedModels at once", async () => {
    const patch = (token: string, tenantId: string, json: object) => gw.request('PATCH', `/api/auth/tenants/${tenantId}`, { token, json });
    assert.equal((await patch(adminA, tenantA, { allowedModels: ['m-two', 'not-served'] })).status, 200);
    assert.deepEqual(await ids({ apiKey: keyA }), ['auto', 'm-two', ...builtIn()]);
    assert.deepEqual(await ids({ token: adminB }), ['auto', 'm-one', 'm-three', 'm-two', ...builtIn()]);
    assert.equal((await patch(adminA, tenantA, { allowedModels: null })).status, 200);
    assert.deepEqual(await ids({ apiKey: keyA }), ['auto', 'm-one', 'm-three', 'm-two', ...builtIn()]);
  });

  it("shows a tenant's own node to that tenant only", async () => {
    const created = await gw.request('POST', '/api/llm/v1/nodes', {
      token: platform,
      json: { name: 'for-a', engine: 'openai', url: privateA.url, tenantIds: [tenantA] },
    });
    assert.equal(created.status, 201, created.text);
    assert.ok((await ids({ apiKey: keyA })).includes('private-a'));
    assert.ok(!(await ids({ token: adminB })).includes('private-a'));
    await assert.rejects(gw.ctx.llm.router.resolveModel(tenantB, 'private-a'), (e: { status?: number }) => e.status === 400);
    const nodesB = (await gw.request('GET', '/api/llm/v1/nodes', { token: adminB })).body.data;
    assert.ok(!nodesB.some((n: { id: string }) => n.id === created.body.id));
    assert.equal((await gw.request('DELETE', `/api/llm/v1/nodes/${created.body.id}`, { token: platform })).status, 204);
    assert.ok(!(await ids({ apiKey: keyA })).includes('private-a'));
  });

  it('works with the official openai SDK and an API key', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/api/llm/v1`, apiKey: keyA, maxRetries: 0 });
    const listed = [];
    for await (const model of client.models.list()) listed.push(model.id);
    assert.deepEqual(listed, ['auto', 'm-one', 'm-three', 'm-two', ...builtIn()]);
  });
});
