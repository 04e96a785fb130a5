// GET /api/llm/v1/models/{id} (the SDK's models.retrieve): the list's record, `auto`
// and the built-in embedder included; ids with slashes and colons, sent as they are or
// percent-encoded; a model the caller cannot use (another tenant's node, left out by
// allowedModels, unknown) is a 404 in OpenAI's words; no credential or a revoked key 401.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';

describe('llm models retrieve', () => {
  let gw: TestGateway;
  let openai: FakeEngine;
  let ollama: FakeEngine;
  let privateA: FakeEngine;
  let world: World;

  before(async () => {
    // `Org/Chat`: segments that are route literals in another case (`chat`) stay as sent.
    openai = await startFakeOpenAI({ models: ['org/Model-7B', 'plain', 'Org/Chat'] });
    ollama = await startFakeOllama({ models: ['library/llama3:8b'] });
    privateA = await startFakeOpenAI({ models: ['private-a'] });
    gw = await gatewayOver([openai, ollama]);
    world = await seedWorld(gw, 'retrieve');
    const node = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'for-a', engine: 'openai', url: privateA.url, tenantIds: [world.a.tenantId] },
    });
    assert.equal(node.status, 201, node.text);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([openai, ollama, privateA].map((f) => f?.close()));
  });

  const retrieve = (path: string, credential: { apiKey?: string; token?: string } = { apiKey: world.a.key.key }) =>
    gw.request('GET', `/api/llm/v1/models/${path}`, credential);

  it('answers with the same record as the list, for every listed id, `auto` and slashes and colons included', async () => {
    const list = await gw.request('GET', '/api/llm/v1/models', { apiKey: world.a.key.key });
    assert.equal(list.status, 200);
    const ids = list.body.data.map((m: { id: string }) => m.id);
    assert.ok(ids.includes('auto') && ids.includes('library/llama3:8b') && ids.includes('org/Model-7B'));
    for (const record of list.body.data) {
      const plain = await retrieve(record.id);
      assert.equal(plain.status, 200, `${record.id}: ${plain.text}`);
      assert.deepEqual(plain.body, record);
      const encoded = await retrieve(encodeURIComponent(record.id));
      assert.equal(encoded.status, 200, `${record.id} encoded: ${encoded.text}`);
      assert.deepEqual(encoded.body, record);
    }
    assert.equal((await retrieve('library/llama3:8b', { token: world.a.member.token })).body.owned_by, 'ollama');
    // The legacy capitalized prefix still works, and the id keeps its case.
    const legacy = await gw.request('GET', '/api/LLM/v1/Models/Org/Chat', { apiKey: world.a.key.key });
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal(legacy.body.id, 'Org/Chat');
  });

  it("is a 404 in OpenAI's words for a model the caller cannot use", async () => {
    const unknown = await retrieve('no-such-model');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.detail, "The model 'no-such-model' does not exist or you do not have access to it.");
    assert.equal((await retrieve('library')).status, 404, 'a prefix of an id is no id');
    assert.equal((await retrieve('library/llama3:8b/extra')).status, 404);

    // Tenant A's own node: A sees private-a, B gets the same 404 as for a model that does not exist.
    assert.equal((await retrieve('private-a')).status, 200);
    const asB = await retrieve('private-a', { apiKey: world.b.key.key });
    assert.equal(asB.status, 404);
    assert.equal(asB.body.detail, "The model 'private-a' does not exist or you do not have access to it.");

    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
      token: world.a.admin.token,
      json: { allowedModels: ['plain'] },
    });
    assert.equal(patched.status, 200, patched.text);
    try {
      assert.equal((await retrieve('org/Model-7B')).status, 404);
      assert.equal((await retrieve('plain')).status, 200);
    } finally {
      await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, { token: world.a.admin.token, json: { allowedModels: null } });
    }
    const long = await retrieve('x'.repeat(201));
    assert.ok(long.status === 400 || long.status === 414, long.text);
  });

  it('refuses no credential and a revoked key with 401', async () => {
    assert.equal((await gw.request('GET', '/api/llm/v1/models/plain')).status, 401);
    const revoked = await createApiKey(gw, world.a.tenantId, 'revoked');
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, revoked.id, 'revoked');
    assert.equal((await retrieve('plain', { apiKey: revoked.key })).status, 401);
  });

  it("works as the official SDK's models.retrieve", async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/api/llm/v1`, apiKey: world.a.key.key, maxRetries: 0 });
    const model = await client.models.retrieve('library/llama3:8b');
    assert.equal(model.id, 'library/llama3:8b');
    assert.equal(model.object, 'model');
    assert.equal((await client.models.retrieve('auto')).owned_by, 'gateway');
    await assert.rejects(client.models.retrieve('private-a-not-here'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      return true;
    });
  });
});
