// Rate limits across two replicas on one PostgreSQL and one Redis, each a `gateway
// start` process of its own (replica-process.ts), called directly (no balancer): a
// key's requests per minute are N in total, not N per replica, and a day budget raced
// from both replicas admits exactly what one process would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, tokenFor } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { startReplicaSet, type GatewayProcess, type ReplicaSet } from '../helpers/replica-process.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const CHAT = '/api/llm/v1/chat/completions';
const json = { model: 'alpha-model', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 20 };

describe('rate limits across two replica processes', { skip }, () => {
  let set: ReplicaSet;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let fake: FakeEngine;
  let tenantId: string;
  let admin: string;
  const chat = (gw: GatewayProcess, apiKey: string) => gw.request('POST', CHAT, { apiKey, json });
  const setLimits = async (keyId: string, limits: Record<string, number>) => {
    const patched = await a.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${keyId}`, { token: admin, json: { limits } });
    assert.equal(patched.status, 200, patched.text);
  };

  before(async () => {
    fake = await startFakeOpenAI({ models: ['alpha-model'] });
    set = await startReplicaSet({
      REDIS_URL: process.env.TEST_REDIS_URL!,
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODES: JSON.stringify([{ engine: fake.kind, url: fake.url, name: 'fake' }]),
      GATEWAY_USAGE_FLUSH_SECONDS: '1',
    });
    [a, b] = await Promise.all([set.start(), set.start()]);
    const seeded = await seedTenant(set, 'rl-replicas');
    tenantId = seeded.tenantId;
    admin = await tokenFor(set, seeded.admin.id, tenantId);
    await eventually('both coordinated', async () => {
      const [ha, hb] = await Promise.all([a.request('GET', '/health'), b.request('GET', '/health')]);
      return ha.body.coordination.status === 'ok' && hb.body.coordination.status === 'ok';
    });
    // Each replica learns the node's models from its first listing, a moment after start.
    const { key } = await createApiKey(set, tenantId, 'unlimited');
    await eventually('both route to the engine', async () => (await chat(a, key)).status === 200 && (await chat(b, key)).status === 200);
  });
  after(async () => {
    await set?.close();
    await fake?.close();
  });

  it('holds N requests per minute across both replicas: of 2N concurrent requests split over A and B, exactly N succeed', async () => {
    const N = 10;
    const { id, key } = await createApiKey(set, tenantId, 'replicated-limit');
    await setLimits(id, { requestsPerMinute: N });
    // GCRA lets one more through every 60/N s: 2N requests finish long before that.
    const answers = await Promise.all(Array.from({ length: 2 * N }, (_, i) => chat(i % 2 ? b : a, key)));
    const ok = answers.filter((r) => r.status === 200).length;
    assert.equal(ok, N, answers.map((r) => `${r.status} ${r.status === 200 ? '' : r.text}`).join('\n'));
    assert.equal(answers.filter((r) => r.status === 429).length, N);
    for (const refused of answers.filter((r) => r.status === 429)) {
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.match(refused.body.detail, /key\.requestsPerMinute/);
    }
  });

  it('lets exactly one of 10 concurrent requests on both replicas take the last unit of a day budget', async () => {
    const { id, key } = await createApiKey(set, tenantId, 'replicated-budget');
    assert.equal((await chat(a, key)).status, 200);
    // A writes its usage record within a second (GATEWAY_USAGE_FLUSH_SECONDS).
    let spent = 0;
    await eventually('the first answer recorded', async () => {
      const [row] = await set.db.query<{ n: number }>(
        'SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n FROM usage_records WHERE principal_id = $1',
        [id],
      );
      spent = Number(row!.n);
      return spent > 0;
    });
    await setLimits(id, { tokensPerDay: spent + 1 });
    // A applied the change before answering; B has never resolved this key, so it reads the limits with it.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(i % 2 ? b : a, key)));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(9).fill(429)], statuses.join(','));
    for (const refused of answers.filter((r) => r.status === 429)) assert.match(refused.body.detail, /key\.tokensPerDay/);
  });
});
