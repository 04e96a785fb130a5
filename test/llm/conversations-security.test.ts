// Who may use the persisted chat and its conversations: spec rule 3 (an API key on
// `POST /chat` gets 500, naming chat/completions, and nothing is stored), the owner
// rule (a person's conversations are theirs alone: another member, the tenant's own
// admin and another tenant all get the 404 an unknown id gets, and cannot read,
// continue, rename or delete them), API keys refused on the conversations routes,
// and malformed input refused with a 400 naming the field, storing nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedUser, tokenFor, withoutCorrelation, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { newId } from '../../src/platform/ids.js';
import { gatewayOver } from './chat-support.js';
import { CHAT, CONVERSATIONS, storeRows } from './conversations-support.js';

describe('persisted chat: who may use it', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  /** A second member of tenant A. */
  let colleague: string;
  /** Member A's conversation, with one turn. */
  let conversationId: string;

  const chat = (json: Record<string, unknown>, headers: Record<string, string>) =>
    gw.request('POST', CHAT, { headers, json: { model: 'sec-model', ...json } });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    fake = await startFakeOpenAI({ models: ['sec-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'conv-sec');
    const user = await seedUser(gw, world.a.tenantId);
    colleague = await tokenFor(gw, user.id, world.a.tenantId);
    const first = await chat({ message: 'my private question' }, bearer(world.a.member.token));
    assert.equal(first.status, 200, first.text);
    conversationId = first.body.conversationId;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('answers an API key on POST /chat with 500 and a detail naming chat/completions, storing nothing and calling no engine', async () => {
    const rows = await storeRows(gw);
    const calls = fake.chatRequests();
    const keyHeaders: Record<string, string>[] = [
      { 'x-api-key': world.a.key.key },
      { authorization: `Bearer ${world.a.key.key}` },
      { 'x-api-key': world.b.key.key },
    ];
    for (const headers of keyHeaders) {
      for (const json of [{ message: 'hi' }, { message: 'hi', stream: true }, { message: 'hi', conversationId }]) {
        const response = await chat(json, headers);
        assert.equal(response.status, 500, response.text);
        assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal(response.body.code, 'USER_IDENTITY_REQUIRED');
        assert.match(response.body.detail, /POST \/api\/llm\/v1\/chat\/completions/);
        assert.match(response.body.detail, /transcript/);
        assert.ok(response.headers.get('x-correlation-id'));
      }
    }
    assert.deepEqual(await storeRows(gw), rows, 'nothing stored');
    assert.equal(fake.chatRequests(), calls, 'no engine asked');
    // And it is the spec's 500, not a crash: nothing logged as a failure.
    assert.doesNotMatch(gw.logs(), /request failed/);
  });

  it("keeps a person's conversation from another member, the tenant's admin and another tenant: the 404 of an unknown id", async () => {
    const unknown = await gw.request('GET', `${CONVERSATIONS}/${newId('conversation')}`, { token: world.a.member.token });
    assert.equal(unknown.status, 404);
    const rows = await storeRows(gw);
    const calls = fake.chatRequests();
    for (const [who, token] of [
      ['another member', colleague],
      ["the tenant's admin", world.a.admin.token],
      ["another tenant's admin", world.b.admin.token],
      ['a platform admin', world.platform.admin.token],
    ] as const) {
      const path = `${CONVERSATIONS}/${conversationId}`;
      const answers = {
        read: await gw.request('GET', path, { token }),
        rename: await gw.request('PATCH', path, { token, json: { title: 'mine now' } }),
        delete: await gw.request('DELETE', path, { token }),
        continue: await chat({ message: 'what did they ask?', conversationId }, bearer(token)),
        'continue streaming': await chat({ message: 'what did they ask?', conversationId, stream: true }, bearer(token)),
      };
      for (const [what, response] of Object.entries(answers)) {
        assert.equal(response.status, 404, `${who} ${what}: ${response.text}`);
        assert.deepEqual(withoutCorrelation(response.body), withoutCorrelation(unknown.body), `${who} ${what}`);
      }
      const list = await gw.request('GET', `${CONVERSATIONS}?limit=100`, { token });
      assert.equal(list.status, 200, list.text);
      assert.ok(!list.body.data.some((c: any) => c.id === conversationId), `${who} does not list it`);
      const cursor = await gw.request('GET', `${CONVERSATIONS}?after=${conversationId}`, { token });
      assert.equal(cursor.status, 400, `${who} cannot page from it: ${cursor.text}`);
    }
    assert.deepEqual(await storeRows(gw), rows, 'nothing appended, renamed away or deleted');
    assert.equal(fake.chatRequests(), calls);
    const own = await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token: world.a.member.token });
    assert.equal(own.status, 200);
    assert.equal(own.body.title, 'my private question');
    assert.deepEqual(
      own.body.messages.data.map((m: any) => m.content),
      ['my private question', 'Fake answer to: my private question'],
    );
  });

  it('answers a thread id or an unknown id as conversationId with the same 404, storing nothing', async () => {
    const rows = await storeRows(gw);
    for (const id of [newId('conversation'), newId('thread')]) {
      const response = await chat({ message: 'hi', conversationId: id }, bearer(world.a.member.token));
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.code, 'NOT_FOUND');
      const read = await gw.request('GET', `${CONVERSATIONS}/${id}`, { token: world.a.member.token });
      assert.equal(read.status, 404, read.text);
    }
    assert.deepEqual(await storeRows(gw), rows);
  });

  it('refuses API keys on the conversations routes with 403', async () => {
    for (const apiKey of [world.a.key.key, world.b.key.key]) {
      for (const [method, path, json] of [
        ['GET', CONVERSATIONS, undefined],
        ['GET', `${CONVERSATIONS}/${conversationId}`, undefined],
        ['PATCH', `${CONVERSATIONS}/${conversationId}`, { title: 'x' }],
        ['DELETE', `${CONVERSATIONS}/${conversationId}`, undefined],
      ] as const) {
        const response = await gw.request(method, path, { apiKey, ...(json ? { json } : {}) });
        assert.equal(response.status, 403, `${method} ${path}: ${response.text}`);
        assert.equal(response.body.code, 'FORBIDDEN');
      }
    }
    assert.equal((await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token: world.a.member.token })).status, 200);
  });

  it('rejects malformed input with a 400 naming the field, before anything is stored or any engine is asked', async () => {
    const rows = await storeRows(gw);
    const calls = fake.chatRequests();
    const headers = bearer(world.a.member.token);
    const cases: [unknown, string][] = [
      [{}, 'message'],
      [{ message: '' }, 'message'],
      [{ message: ' \n\t ' }, 'message'],
      [{ message: 42 }, 'message'],
      [{ message: 'nul \u0000 inside' }, 'message'],
      [{ message: 'hi', max_tokens: 0 }, 'max_tokens'],
      [{ message: 'hi', max_tokens: 8193 }, 'max_tokens'],
      [{ message: 'hi', max_tokens: '5' }, 'max_tokens'],
      [{ message: 'hi', temperature: -0.1 }, 'temperature'],
      [{ message: 'hi', temperature: 2.5 }, 'temperature'],
      [{ message: 'hi', model: '' }, 'model'],
      [{ message: 'hi', conversationId: 'not-an-id' }, 'conversationId'],
      [{ message: 'hi', conversationId: 42 }, 'conversationId'],
      [{ message: 'hi', conversationId: `${conversationId}' OR '1'='1` }, 'conversationId'],
      [{ message: 'hi', stream: 'yes' }, 'stream'],
      [{ message: 'hi', stream_options: { include_usage: 1 } }, 'stream_options.include_usage'],
      [{ message: 'hi', workspaceIds: 'ws_1' }, 'workspaceIds'],
      [{ message: 'hi', ragScopes: {} }, 'ragScopes'],
    ];
    for (const [json, field] of cases) {
      const response = await gw.request('POST', CHAT, { headers, json });
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} should name ${field}: ${JSON.stringify(response.body.errors)}`,
      );
    }
    const token = world.a.member.token;
    const queries: [string, string][] = [
      [`${CONVERSATIONS}?limit=0`, 'limit'],
      [`${CONVERSATIONS}?limit=101`, 'limit'],
      [`${CONVERSATIONS}?limit=ten`, 'limit'],
      [`${CONVERSATIONS}?after=garbage`, 'after'],
      [`${CONVERSATIONS}?after=${newId('conversation')}`, 'after'],
      [`${CONVERSATIONS}/${conversationId}?limit=-1`, 'limit'],
      [`${CONVERSATIONS}/${conversationId}?after=${newId('message')}`, 'after'],
    ];
    for (const [path, field] of queries) {
      const response = await gw.request('GET', path, { token });
      assert.equal(response.status, 400, `${path}: ${response.text}`);
      assert.equal(response.body.errors[0].field, field, path);
    }
    for (const title of ['', '   ', 'x'.repeat(201), 'line\nbreak', 7]) {
      const response = await gw.request('PATCH', `${CONVERSATIONS}/${conversationId}`, { token, json: { title } });
      assert.equal(response.status, 400, `${JSON.stringify(title)}: ${response.text}`);
      assert.equal(response.body.errors[0].field, 'title');
    }
    assert.deepEqual(await storeRows(gw), rows);
    assert.equal(fake.chatRequests(), calls);
    const own = await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token });
    assert.equal(own.body.title, 'my private question', 'no bad title stored');
  });
});
