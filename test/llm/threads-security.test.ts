// Who may reach the threads API's records, route by route (assistants, threads,
// messages): no credential and a revoked key get 401; another tenant's ids are 404;
// another owner's ids are 404 too, even inside the tenant (a person's records are
// theirs alone; what the tenant's API keys made is shared by its keys, not its people);
// and both credentials, API key (either header) and access token, work.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestOptions, TestGateway } from '../helpers/gateway.js';
import { seedUser, tokenFor } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';

const BASE = '/api/llm/v1';

type Credential = Pick<RequestOptions, 'apiKey' | 'token' | 'headers'>;
interface Records {
  assistantId: string;
  threadId: string;
  messageId: string;
}
type Call = [method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown];

/** Every route of the threads API but the lists, on one owner's records. */
const routesOn = (r: Records): Call[] => [
  ['GET', `/assistants/${r.assistantId}`],
  ['POST', `/assistants/${r.assistantId}`, { name: 'taken over' }],
  ['DELETE', `/assistants/${r.assistantId}`],
  ['GET', `/threads/${r.threadId}`],
  ['POST', `/threads/${r.threadId}`, { metadata: { taken: 'over' } }],
  ['DELETE', `/threads/${r.threadId}`],
  ['POST', `/threads/${r.threadId}/messages`, { role: 'user', content: 'planted' }],
  ['GET', `/threads/${r.threadId}/messages`],
  ['GET', `/threads/${r.threadId}/messages/${r.messageId}`],
  ['POST', `/threads/${r.threadId}/messages/${r.messageId}`, { metadata: { taken: 'over' } }],
  ['DELETE', `/threads/${r.threadId}/messages/${r.messageId}`],
];

/** The creates and lists, which carry no ids. */
const OPEN_ROUTES: Call[] = [
  ['POST', '/assistants', { model: 'sec-model' }],
  ['GET', '/assistants'],
  ['POST', '/threads', {}],
  ['GET', '/threads'],
];

describe('threads API: credentials, tenants and owners', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let secondMember: Credential;
  const asKey = (world: World): Credential => ({ apiKey: world.a.key.key });

  before(async () => {
    fake = await startFakeOpenAI({ models: ['sec-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'tsec');
    const other = await seedUser(gw, world.a.tenantId);
    secondMember = { token: await tokenFor(gw, other.id, world.a.tenantId) };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const call = (credential: Credential, [method, path, json]: Call) =>
    gw.request(method, BASE + path, { ...credential, ...(json !== undefined ? { json } : {}) });

  /** An assistant, and a thread with one message, made by `credential`. */
  async function recordsOf(credential: Credential): Promise<Records> {
    const assistant = await call(credential, ['POST', '/assistants', { model: 'sec-model', name: 'mine' }]);
    assert.equal(assistant.status, 200, assistant.text);
    const thread = await call(credential, ['POST', '/threads', { messages: [{ role: 'user', content: 'secret question' }] }]);
    assert.equal(thread.status, 200, thread.text);
    const messages = await call(credential, ['GET', `/threads/${thread.body.id}/messages`]);
    return { assistantId: assistant.body.id, threadId: thread.body.id, messageId: messages.body.data[0].id };
  }

  /** The records are as they were: nothing modified, deleted or planted. */
  async function assertUntouched(owner: Credential, records: Records) {
    const assistant = await call(owner, ['GET', `/assistants/${records.assistantId}`]);
    assert.equal(assistant.body.name, 'mine');
    const thread = await call(owner, ['GET', `/threads/${records.threadId}`]);
    assert.deepEqual(thread.body.metadata, {});
    const messages = await call(owner, ['GET', `/threads/${records.threadId}/messages`]);
    assert.deepEqual(
      messages.body.data.map((m: any) => [m.id, m.content[0].text.value, m.metadata]),
      [[records.messageId, 'secret question', {}]],
    );
  }

  it('answers 401 to a request without a credential, on every route', async () => {
    const records = await recordsOf(asKey(world));
    for (const route of [...OPEN_ROUTES, ...routesOn(records)]) {
      const response = await call({}, route);
      assert.equal(response.status, 401, `${route[0]} ${route[1]}`);
      assert.equal(response.body.code, 'UNAUTHENTICATED');
    }
    await assertUntouched(asKey(world), records);
  });

  it('answers 401 to a revoked key on every route, though it made the records', async () => {
    const { id, key } = await createApiKey(gw, world.a.tenantId, 'soon revoked');
    const records = await recordsOf({ apiKey: key });
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, id, 'revoked');
    for (const route of [...OPEN_ROUTES, ...routesOn(records)]) {
      for (const credential of [{ apiKey: key }, { headers: { authorization: `Bearer ${key}` } }]) {
        const response = await call(credential, route);
        assert.equal(response.status, 401, `${route[0]} ${route[1]}`);
      }
    }
    // The tenant's other keys still reach them: what keys make is the tenant's keys'.
    await assertUntouched(asKey(world), records);
  });

  it("answers 404 to another tenant's admin and key on every route with tenant A's ids, and changes nothing", async () => {
    const records = await recordsOf(asKey(world));
    for (const credential of [{ apiKey: world.b.key.key }, { token: world.b.admin.token }, { token: world.platform.admin.token }]) {
      for (const route of routesOn(records)) {
        const response = await call(credential, route);
        assert.equal(response.status, 404, `${route[0]} ${route[1]}: ${response.text}`);
      }
    }
    await assertUntouched(asKey(world), records);
  });

  it("answers 404 to the tenant's people on what its API keys made, and to the keys on what a person made", async () => {
    const keyRecords = await recordsOf(asKey(world));
    for (const credential of [{ token: world.a.member.token }, { token: world.a.admin.token }]) {
      for (const route of routesOn(keyRecords)) {
        const response = await call(credential, route);
        assert.equal(response.status, 404, `${route[0]} ${route[1]}: ${response.text}`);
      }
    }
    await assertUntouched(asKey(world), keyRecords);

    const member = { token: world.a.member.token };
    const memberRecords = await recordsOf(member);
    for (const credential of [asKey(world), { token: world.a.admin.token }, secondMember]) {
      for (const route of routesOn(memberRecords)) {
        const response = await call(credential, route);
        assert.equal(response.status, 404, `${route[0]} ${route[1]}: ${response.text}`);
      }
    }
    await assertUntouched(member, memberRecords);
    assert.match(
      (await call(secondMember, ['GET', `/threads/${memberRecords.threadId}`])).body.detail,
      /^No thread found with id 'thread_/,
    );
  });

  it("lists only the caller's own assistants and threads", async () => {
    const member = { token: world.a.member.token };
    const memberRecords = await recordsOf(member);
    const keyRecords = await recordsOf(asKey(world));
    const idsOf = async (credential: Credential, path: string) =>
      ((await call(credential, ['GET', `${path}?limit=100`])).body.data as { id: string }[]).map((o) => o.id);
    for (const [credential, own, foreign] of [
      [member, memberRecords, keyRecords],
      [asKey(world), keyRecords, memberRecords],
    ] as const) {
      assert.ok((await idsOf(credential, '/threads')).includes(own.threadId));
      assert.ok(!(await idsOf(credential, '/threads')).includes(foreign.threadId));
      assert.ok((await idsOf(credential, '/assistants')).includes(own.assistantId));
      assert.ok(!(await idsOf(credential, '/assistants')).includes(foreign.assistantId));
    }
    for (const credential of [secondMember, { token: world.a.admin.token }, { apiKey: world.b.key.key }, { token: world.b.admin.token }]) {
      const threads = await idsOf(credential, '/threads');
      const assistants = await idsOf(credential, '/assistants');
      for (const records of [memberRecords, keyRecords]) {
        assert.ok(!threads.includes(records.threadId));
        assert.ok(!assistants.includes(records.assistantId));
      }
    }
  });

  it('works the same with an access token, an API key in X-API-Key or as Bearer, and another key of the tenant', async () => {
    const member = { token: world.a.member.token };
    const viaToken = await recordsOf(member);
    for (const route of routesOn(viaToken).filter(([method]) => method !== 'DELETE')) {
      const response = await call(member, route);
      assert.equal(response.status, 200, `${route[0]} ${route[1]}: ${response.text}`);
    }

    const records = await recordsOf(asKey(world));
    const second = await createApiKey(gw, world.a.tenantId, 'second');
    const keyCredentials: Credential[] = [
      asKey(world),
      { headers: { authorization: `Bearer ${world.a.key.key}` } },
      { apiKey: second.key },
      { headers: { authorization: `Bearer ${second.key}` } },
    ];
    for (const credential of keyCredentials) {
      for (const route of routesOn(records).filter(([method]) => method !== 'DELETE')) {
        const response = await call(credential, route);
        assert.equal(response.status, 200, `${route[0]} ${route[1]}: ${response.text}`);
      }
    }
    for (const route of routesOn(records)
      .filter(([method]) => method === 'DELETE')
      .reverse()) {
      const response = await call({ apiKey: second.key }, route);
      assert.equal(response.status, 200, `${route[0]} ${route[1]}: ${response.text}`);
    }
  });
});
