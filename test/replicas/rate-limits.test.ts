// Rate limits across two replicas on one PostgreSQL and one Redis, called directly (no
// balancer): a key's requests per minute are N in total, not N per replica, and a
// day budget raced from both replicas admits exactly what one process would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, startReplica, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from '../llm/chat-support.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const CHAT = '/api/llm/v1/chat/completions';
const json = { messages: [{ role: 'user', content: 'hello there' }], max_tokens: 20 };

describe('rate limits across two replicas', { skip }, () => {
  let a: TestGateway;
  let b: TestGateway;
  let fake: FakeEngine;
  let tenantId: string;
  let admin: string;
  const chat = (gw: TestGateway, apiKey: string) => gw.request('POST', CHAT, { apiKey, json });
  const limitedKey = async (limits: Record<string, number>) => {
    const key = await createApiKey(a, tenantId, 'replicated-limit');
    const patched = await a.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${key.id}`, { token: admin, json: { limits } });
    assert.equal(patched.status, 200, patched.text);
    return key;
  };

  before(async () => {
    fake = await startFakeOpenAI({ models: ['alpha-model'] });
    a = await gatewayOver([fake], { REDIS_URL: process.env.TEST_REDIS_URL! });
    b = await startReplica(a);
    const seeded = await seedTenant(a, 'rl-replicas');
    tenantId = seeded.tenantId;
    admin = await tokenFor(a, seeded.admin.id, tenantId);
    await eventually('both coordinated', async () => {
      const [ha, hb] = await Promise.all([a.request('GET', '/health'), b.request('GET', '/health')]);
      return ha.body.coordination.status === 'ok' && hb.body.coordination.status === 'ok';
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('holds N requests per minute across both replicas: of 2N concurrent requests split over A and B, exactly N succeed', async () => {
    const N = 10;
    const { key } = await limitedKey({ requestsPerMinute: N });
    // GCRA lets one more through every 60/N s: 2N requests finish long before that.
    const answers = await Promise.all(Array.from({ length: 2 * N }, (_, i) => chat(i % 2 ? b : a, key)));
    const ok = answers.filter((r) => r.status === 200).length;
    assert.equal(ok, N, answers.map((r) => r.status).join(','));
    assert.equal(answers.filter((r) => r.status === 429).length, N);
    for (const refused of answers.filter((r) => r.status === 429)) {
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.match(refused.body.detail, /key\.requestsPerMinute/);
    }
  });

  it('lets exactly one of 10 concurrent requests on both replicas take the last unit of a day budget', async () => {
    const { id, key } = await createApiKey(a, tenantId, 'replicated-budget');
    assert.equal((await chat(a, key)).status, 200);
    await a.ctx.llm.usage.flush();
    const [row] = await a.ctx.db.query<{ n: number }>(
      'SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n FROM usage_records WHERE principal_id = $1',
      [id],
    );
    const spent = Number(row!.n);
    assert.ok(spent > 0);
    const patched = await a.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${id}`, {
      token: admin,
      json: { limits: { tokensPerDay: spent + 1 } },
    });
    assert.equal(patched.status, 200, patched.text);
    // B learns of the change over the bus (its cached key carries the limits).
    await eventually('B sees the budget', async () => (await b.ctx.auth.apiKeys.resolve(key))?.limits?.tokensPerDay === spent + 1, 2000);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(i % 2 ? b : a, key)));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(9).fill(429)], statuses.join(','));
    for (const refused of answers.filter((r) => r.status === 429)) assert.match(refused.body.detail, /key\.tokensPerDay/);
  });
});
