// Who may reach a response: no credential and a revoked key get 401 on every route;
// another tenant's response ids are 404 (read, delete, input items, and as
// previous_response_id); so are another owner's inside the tenant (a person's
// responses are theirs alone, the API keys' are the keys'). `conversation` continues
// the caller's own persisted chat only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestOptions, TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';

const BASE = '/api/llm/v1';
type Credential = Pick<RequestOptions, 'apiKey' | 'token' | 'headers'>;

describe('responses API security', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;

  const call = (credential: Credential, method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown) =>
    gw.request(method, BASE + path, { ...credential, ...(json !== undefined ? { json } : {}) });
  const create = async (credential: Credential, body: object = {}) => {
    const res = await call(credential, 'POST', '/responses', { model: 'sec-model', input: 'secret question', ...body });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const routesOn = (id: string): [method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown][] => [
    ['GET', `/responses/${id}`],
    ['GET', `/responses/${id}/input_items`],
    ['POST', '/responses', { model: 'sec-model', input: 'more', previous_response_id: id }],
    ['DELETE', `/responses/${id}`],
  ];

  before(async () => {
    fake = await startFakeOpenAI({ models: ['sec-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'rsec');
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('answers 401 without a credential and to a revoked key, on every route', async () => {
    const { id: keyId, key } = await createApiKey(gw, world.a.tenantId, 'soon revoked');
    const id = await create({ apiKey: key });
    for (const [method, path, json] of routesOn(id)) {
      const res = await call({}, method, path, json);
      assert.equal(res.status, 401, `${method} ${path}`);
    }
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, keyId, 'revoked');
    for (const [method, path, json] of routesOn(id)) {
      const res = await call({ apiKey: key }, method, path, json);
      assert.equal(res.status, 401, `${method} ${path}`);
    }
    // What the keys made is the tenant's keys': another key still reads it.
    assert.equal((await call({ apiKey: world.a.key.key }, 'GET', `/responses/${id}`)).status, 200);
  });

  it("answers 404 to another tenant's credentials and to another owner's, and changes nothing", async () => {
    const byKey = await create({ apiKey: world.a.key.key });
    const byMember = await create({ token: world.a.member.token });
    const strangers: [Credential, string][] = [
      [{ apiKey: world.b.key.key }, byKey],
      [{ token: world.b.admin.token }, byKey],
      [{ token: world.platform.admin.token }, byKey],
      [{ token: world.a.member.token }, byKey],
      [{ token: world.a.admin.token }, byKey],
      [{ apiKey: world.a.key.key }, byMember],
      [{ token: world.a.admin.token }, byMember],
    ];
    for (const [credential, id] of strangers)
      for (const [method, path, json] of routesOn(id)) {
        const res = await call(credential, method, path, json);
        assert.equal(res.status, 404, `${method} ${path} by ${JSON.stringify(credential).slice(0, 30)}: ${res.text}`);
        assert.match(res.body.detail, /[Rr]esponse with id '.+' not found\./);
        assert.ok(!res.text.includes('secret question'));
      }
    assert.equal((await call({ apiKey: world.a.key.key }, 'GET', `/responses/${byKey}`)).status, 200);
    assert.equal((await call({ token: world.a.member.token }, 'GET', `/responses/${byMember}`)).status, 200);
    // Malformed ids are the same 404.
    assert.equal((await call({ apiKey: world.a.key.key }, 'GET', '/responses/not-an-id')).status, 404);
  });

  it("continues the caller's own persisted chat with `conversation`; anyone else's is a 404", async () => {
    const chat = await call({ token: world.a.member.token }, 'POST', '/chat', { message: 'chat question', model: 'sec-model' });
    assert.equal(chat.status, 200, chat.text);
    const conversationId = chat.body.conversationId as string;
    const res = await call({ token: world.a.member.token }, 'POST', '/responses', {
      model: 'sec-model',
      input: 'follow-up',
      conversation: conversationId,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.conversation, { id: conversationId });
    const sent = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.messages;
    assert.deepEqual(
      sent.map((m: { content: string }) => m.content),
      ['chat question', 'Fake answer to: chat question', 'follow-up'],
    );
    const kept = await call({ token: world.a.member.token }, 'GET', `/conversations/${conversationId}`);
    assert.deepEqual(
      kept.body.messages.data.map((m: { content: string }) => m.content),
      ['chat question', 'Fake answer to: chat question', 'follow-up', 'Fake answer to: follow-up'],
    );
    // Tools after a response in the chat branch off: the chat keeps text turns only.
    const branched = await call({ token: world.a.member.token }, 'POST', '/responses', {
      model: 'sec-model',
      input: 'with tools',
      previous_response_id: res.body.id,
      tools: [{ type: 'function', name: 'lookup' }],
    });
    assert.equal(branched.status, 200, branched.text);
    const still = await call({ token: world.a.member.token }, 'GET', `/conversations/${conversationId}`);
    assert.equal(still.body.messages.data.length, 4);
    for (const credential of [{ apiKey: world.a.key.key }, { token: world.a.admin.token }, { token: world.b.admin.token }]) {
      const refused = await call(credential, 'POST', '/responses', { model: 'sec-model', input: 'x', conversation: conversationId });
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.detail, `Conversation with id '${conversationId}' not found.`);
    }
  });
});
