// `Idempotency-Key` on the threads API's creates (llm/idempotency/): a retry gets the
// record the first attempt made, in its current state; the key with another request is
// a 400; a duplicate while the first is still creating is a 409 (which the openai SDK
// retries by itself); a failed create gives the key back; keys are kept for 24 hours.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { RequestOptions, TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';
import { newId } from '../../src/platform/ids.js';
import { conversationRepository } from '../../src/areas/llm/history/repository.js';

const BASE = '/api/llm/v1';
const HEADER = 'Idempotency-Key';

describe('Idempotency-Key on creates', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let key: { apiKey: string };
  let seq = 0;
  const freshKey = () => `key-${++seq}-${Date.now()}`;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['idem-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'idem');
    key = { apiKey: world.a.key.key };
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const post = (path: string, json: unknown, idempotencyKey?: string, credential: RequestOptions = key) =>
    gw.request('POST', BASE + path, {
      ...credential,
      json,
      ...(idempotencyKey !== undefined ? { headers: { [HEADER]: idempotencyKey } } : {}),
    });
  const count = async (sql: string, params: unknown[] = []) => (await gw.ctx.db.query<{ n: number }>(sql, params))[0]!.n;
  const threadCount = () => count('SELECT count(*)::int AS n FROM conversations WHERE tenant_id = $1', [world.a.tenantId]);
  const setKeyRow = (k: string, set: string) => gw.ctx.db.query(`UPDATE idempotency_keys SET ${set} WHERE key = $1`, [k]);

  it('answers a retry with the record the first request made, in its current state, and makes no second one', async () => {
    const k = freshKey();
    const body = { metadata: { order: '1' }, messages: [{ role: 'user', content: 'hello' }] };
    const before = await threadCount();
    const first = await post('/threads', body, k);
    assert.equal(first.status, 200, first.text);
    const retry = await post('/threads', body, k);
    assert.equal(retry.status, 200);
    assert.deepEqual(retry.body, first.body);
    assert.equal(await threadCount(), before + 1);
    assert.equal(await count('SELECT count(*)::int AS n FROM conversation_items WHERE conversation_id = $1', [first.body.id]), 1);

    // The same JSON written another way is the same request; the answer is the thread as it is now.
    await gw.request('POST', `${BASE}/threads/${first.body.id}`, { ...key, json: { metadata: { order: '2' } } });
    const reordered = await gw.request('POST', `${BASE}/threads`, {
      ...key,
      headers: { [HEADER]: k, 'content-type': 'application/json' },
      body: '{ "messages": [{"content": "hello", "role": "user"}],\n "metadata": {"order": "1"} }',
    });
    assert.equal(reordered.status, 200, reordered.text);
    assert.equal(reordered.body.id, first.body.id);
    assert.deepEqual(reordered.body.metadata, { order: '2' });
  });

  it('makes a new record for a new key, and for no key at all', async () => {
    const body = { name: 'same body', model: 'idem-model' };
    const ids = new Set<string>();
    for (const k of [freshKey(), freshKey(), undefined, undefined]) ids.add((await post('/assistants', body, k)).body.id);
    assert.equal(ids.size, 4);
  });

  it('refuses the key with a different request (body, route or thread) with 400 naming the header', async () => {
    const k = freshKey();
    const thread = (await post('/threads', {}, k)).body;
    const threadsBefore = await threadCount();
    for (const [path, json] of [
      ['/threads', { metadata: { other: 'body' } }],
      ['/assistants', { model: 'idem-model' }],
      [`/threads/${thread.id}/messages`, { role: 'user', content: 'x' }],
    ] as const) {
      const response = await post(path, json, k);
      assert.equal(response.status, 400, `${path}: ${response.text}`);
      assert.equal(response.body.errors[0].field, HEADER);
    }
    assert.equal(await threadCount(), threadsBefore);
    assert.equal(
      await count('SELECT count(*)::int AS n FROM assistants WHERE tenant_id = $1 AND model = $2 AND name IS NULL', [
        world.a.tenantId,
        'idem-model',
      ]),
      0,
    );

    // A message key is bound to its thread.
    const m = freshKey();
    const other = (await post('/threads', {})).body;
    assert.equal((await post(`/threads/${thread.id}/messages`, { role: 'user', content: 'hi' }, m)).status, 200);
    const elsewhere = await post(`/threads/${other.id}/messages`, { role: 'user', content: 'hi' }, m);
    assert.equal(elsewhere.status, 400);
    assert.equal(elsewhere.body.errors[0].field, HEADER);
  });

  it("keeps each owner's keys apart", async () => {
    const k = freshKey();
    const viaKey = await post('/threads', {}, k);
    const viaMember = await post('/threads', {}, k, { token: world.a.member.token });
    const viaOtherTenant = await post('/threads', {}, k, { apiKey: world.b.key.key });
    assert.equal(new Set([viaKey.body.id, viaMember.body.id, viaOtherTenant.body.id]).size, 3);
    assert.equal((await post('/threads', {}, k, { token: world.a.member.token })).body.id, viaMember.body.id);
  });

  it('answers 409 with Retry-After while the first request is still creating, and takes over a claim abandoned for a minute', async () => {
    const k = freshKey();
    const first = await post('/threads', {}, k);
    const [row] = await gw.ctx.db.query<{ resource_id: string }>('SELECT resource_id FROM idempotency_keys WHERE key = $1', [k]);
    assert.equal(row?.resource_id, first.body.id);

    await setKeyRow(k, 'resource_id = NULL'); // as while the first request is between its claim and its answer
    const pending = await post('/threads', {}, k);
    assert.equal(pending.status, 409, pending.text);
    assert.equal(pending.headers.get('retry-after'), '1');
    assert.match(pending.body.detail, /still being processed/);

    await setKeyRow(k, "created_at = now() - interval '2 minutes'"); // its process died
    const before = await threadCount();
    const takenOver = await post('/threads', {}, k);
    assert.equal(takenOver.status, 200, takenOver.text);
    assert.notEqual(takenOver.body.id, first.body.id);
    assert.equal(await threadCount(), before + 1);
    assert.equal((await post('/threads', {}, k)).body.id, takenOver.body.id);
  });

  it('makes one record for concurrent duplicates: the others get it too, or a 409 to retry', async () => {
    const k = freshKey();
    const body = { messages: [{ role: 'user', content: 'at once' }] };
    const before = await threadCount();
    const responses = await Promise.all(Array.from({ length: 8 }, () => post('/threads', body, k)));
    const statuses = new Set(responses.map((r) => r.status));
    assert.ok(
      [...statuses].every((status) => status === 200 || status === 409),
      [...statuses].join(),
    );
    const ids = new Set(responses.filter((r) => r.status === 200).map((r) => r.body.id));
    assert.equal(ids.size, 1);
    assert.equal(await threadCount(), before + 1);
  });

  it('forgets a key after 24 hours', async () => {
    const k = freshKey();
    const first = await post('/threads', {}, k);
    await setKeyRow(k, "created_at = now() - interval '24 hours 1 minute'");
    const later = await post('/threads', { metadata: { new: 'request' } }, k);
    assert.equal(later.status, 200, later.text);
    assert.notEqual(later.body.id, first.body.id);
    assert.equal((await post('/threads', { metadata: { new: 'request' } }, k)).body.id, later.body.id);
  });

  it('gives the key back when the create fails, so the retry can succeed', async () => {
    const thread = (await post('/threads', { messages: [{ role: 'user', content: 'question' }] })).body;
    const runId = newId('run');
    await gw.ctx.db.query(
      "INSERT INTO runs (id, tenant_id, conversation_id, owner, status, model) VALUES ($1, $2, $3, 'keys', 'in_progress', 'idem-model')",
      [runId, world.a.tenantId, thread.id],
    );
    assert.ok(await conversationRepository.claimActiveRun(gw.ctx.db, thread.id, runId));
    const k = freshKey();
    const message = { role: 'user', content: 'follow-up' };
    const refused = await post(`/threads/${thread.id}/messages`, message, k);
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /while a run run_\w+ is active/);
    assert.equal(await count('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [k]), 0);

    await conversationRepository.releaseActiveRun(gw.ctx.db, thread.id, runId);
    const accepted = await post(`/threads/${thread.id}/messages`, message, k);
    assert.equal(accepted.status, 200, accepted.text);
    const retried = await post(`/threads/${thread.id}/messages`, message, k);
    assert.deepEqual(retried.body, accepted.body);
    const messages = await gw.request('GET', `${BASE}/threads/${thread.id}/messages`, key);
    assert.equal(messages.body.data.length, 2);
  });

  it('answers 404 to a retry whose record was deleted since', async () => {
    const k = freshKey();
    const first = await post('/assistants', { model: 'idem-model' }, k);
    await gw.request('DELETE', `${BASE}/assistants/${first.body.id}`, key);
    const retry = await post('/assistants', { model: 'idem-model' }, k);
    assert.equal(retry.status, 404);
    assert.match(retry.body.detail, new RegExp(first.body.id));
  });

  it('refuses a key that is empty, longer than 255 characters or not printable ASCII', async () => {
    for (const bad of ['', 'k'.repeat(256), 'clé', 'tab\there']) {
      const response = await post('/threads', {}, bad);
      assert.equal(response.status, 400, JSON.stringify(bad));
      assert.equal(response.body.errors[0].field, HEADER);
    }
    assert.equal((await post('/threads', {}, 'k'.repeat(255))).status, 200);
    assert.equal((await post('/threads', {}, ' ~!"#$%&()*+,-./:;<=>?@[\\]^_`{|}')).status, 200);
  });

  it('works with the openai SDK: a retried 409 gets the record once the first request is done', async () => {
    const k = freshKey();
    const assistant = await post('/assistants', { model: 'idem-model', name: 'sdk' }, k);
    await setKeyRow(k, 'resource_id = NULL');
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: world.a.key.key,
      baseURL: `${gw.url}${BASE}`,
      maxRetries: 2,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        statuses.push(response.status);
        // The first request finishes while the SDK waits to retry.
        if (response.status === 409) await setKeyRow(k, `resource_id = '${assistant.body.id}'`);
        return response;
      },
    });
    const created = await client.beta.assistants.create({ model: 'idem-model', name: 'sdk' }, { headers: { [HEADER]: k } });
    assert.equal(created.id, assistant.body.id);
    assert.deepEqual(statuses, [409, 200]);
  });
});
