// Rate limits on every path that reaches a model beyond chat/completions (the persisted
// chat, the Responses API, thread runs), and how a reservation ends: an engine error
// releases it, a client that goes away mid-stream is charged what was generated, a
// restart keeps the period's spend (seeded from the usage table), and a Redis outage
// falls back to per-replica limits and recovers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { redisServerMissing, startRedis, type TestRedis } from '../helpers/redis.js';
import { gatewayOver, openStream } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const messages = [{ role: 'user', content: 'hello there' }];
const MAX_TOKENS = 20;
const RESERVATION = Math.ceil(JSON.stringify(messages).length / 3) + MAX_TOKENS;
const BUDGET = 1_000_000;

describe('rate limits on every model path, and how reservations end', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let slow: FakeEngine;
  let broken: FakeEngine;
  let tenantId: string, adminToken: string;

  const limitedKey = async (limits: Record<string, number>) => {
    const created = await createApiKey(gw, tenantId, 'paths');
    const patched = await gw.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${created.id}`, {
      token: adminToken,
      json: { limits },
    });
    assert.equal(patched.status, 200, patched.text);
    return created;
  };
  const chat = (apiKey: string, extra: Record<string, unknown> = {}) =>
    gw.request('POST', CHAT, { apiKey, json: { messages, max_tokens: MAX_TOKENS, ...extra } });
  const tokensOf = async (principalId: string) => {
    await gw.ctx.llm.usage.flush();
    const [row] = await gw.ctx.db.query<{ n: number; c: number }>(
      'SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n, count(*)::int AS c FROM usage_records WHERE principal_id = $1',
      [principalId],
    );
    return { tokens: Number(row!.n), records: row!.c };
  };
  /** The budget left as a request with the spec's default reservation sees it. */
  const remainingSeenBy = async (key: string) => {
    const response = await chat(key);
    assert.equal(response.status, 200, response.text);
    return Number(response.headers.get('x-ratelimit-remaining-tokens')) + RESERVATION;
  };

  before(async () => {
    fake = await startFakeOpenAI({ models: ['alpha-model'] });
    slow = await startFakeOpenAI({ models: ['slow-model'], tokenDelayMs: 50, repeat: 100 });
    broken = await startFakeOpenAI({ models: ['broken-model'], status: 500 });
    gw = await gatewayOver([fake, slow, broken], { GATEWAY_USAGE_FLUSH_SECONDS: '3600' });
    const t = await seedTenant(gw, 'rl-paths');
    tenantId = t.tenantId;
    adminToken = await tokenFor(gw, t.admin.id, tenantId);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), slow?.close(), broken?.close()]);
  });

  it('limits the persisted chat, the Responses API and thread runs', async () => {
    const t = await seedTenant(gw, 'rl-paths-tenant');
    const admin = await tokenFor(gw, t.admin.id, t.tenantId);
    const { key } = await createApiKey(gw, t.tenantId, 'paths');
    const platform = await seedTenant(gw, 'rl-paths-platform', ['platform_admin']);
    const platformToken = await tokenFor(gw, platform.admin.id, platform.tenantId);
    const assistant = await gw.request('POST', '/api/llm/v1/assistants', { apiKey: key, json: { model: 'alpha-model' } });
    assert.equal(assistant.status, 200, assistant.text);
    const set = await gw.request('PATCH', `/api/auth/tenants/${t.tenantId}`, {
      token: platformToken,
      json: { limits: { requestsPerMinute: 3 } },
    });
    assert.equal(set.status, 200, set.text);
    const calls = [
      () => gw.request('POST', '/api/llm/v1/chat', { token: admin, json: { message: 'hello' } }),
      () => gw.request('POST', '/api/llm/v1/responses', { apiKey: key, json: { model: 'alpha-model', input: 'hello' } }),
      () =>
        gw.request('POST', '/api/llm/v1/threads/runs', {
          apiKey: key,
          json: { assistant_id: assistant.body.id, thread: { messages: [{ role: 'user', content: 'hello' }] } },
        }),
    ];
    for (const call of calls) {
      const response = await call();
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers.get('x-ratelimit-limit'), '3');
    }
    for (const call of calls) {
      const refused = await call();
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.body.detail, /tenant\.requestsPerMinute/);
    }
  });

  it('reserves at least the context window for requests with a kept history (their history and sources are not in the body)', async () => {
    const t = await seedTenant(gw, 'rl-paths-history');
    const admin = await tokenFor(gw, t.admin.id, t.tenantId);
    const { key } = await createApiKey(gw, t.tenantId, 'history');
    const platform = await seedTenant(gw, 'rl-paths-history-platform', ['platform_admin']);
    const platformToken = await tokenFor(gw, platform.admin.id, platform.tenantId);
    const assistant = await gw.request('POST', '/api/llm/v1/assistants', { apiKey: key, json: { model: 'alpha-model' } });
    assert.equal(assistant.status, 200, assistant.text);
    const budget = 10_000_000;
    const set = await gw.request('PATCH', `/api/auth/tenants/${t.tenantId}`, {
      token: platformToken,
      json: { limits: { tokensPerDay: budget } },
    });
    assert.equal(set.status, 200, set.text);
    // Each request sees what is left after its own reservation: the reservations differ
    // by route, whatever the tokens earlier requests used (the same few each time).
    const reservedBy = async (call: () => Promise<{ status: number; text: string; headers: Headers }>) => {
      await gw.ctx.llm.usage.flush();
      const [row] = await gw.ctx.db.query<{ n: number }>(
        'SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n FROM usage_records WHERE tenant_id = $1',
        [t.tenantId],
      );
      const response = await call();
      assert.equal(response.status, 200, response.text);
      return budget - Number(row!.n) - Number(response.headers.get('x-ratelimit-remaining-tokens'));
    };
    const CONTEXT = 4096; // GATEWAY_RAG_CONTEXT_TOKENS' default
    // Without a history, a response reserves its body's estimate and the default answer.
    const fresh = await reservedBy(() =>
      gw.request('POST', '/api/llm/v1/responses', { apiKey: key, json: { model: 'alpha-model', input: 'hello' } }),
    );
    assert.equal(fresh, Math.ceil(JSON.stringify('hello').length / 3) + 1024);
    const persisted = await reservedBy(() => gw.request('POST', '/api/llm/v1/chat', { token: admin, json: { message: 'hello' } }));
    assert.equal(persisted, CONTEXT);
    const run = await reservedBy(() =>
      gw.request('POST', '/api/llm/v1/threads/runs', {
        apiKey: key,
        json: { assistant_id: assistant.body.id, thread: { messages: [{ role: 'user', content: 'hello' }] } },
      }),
    );
    assert.equal(run, CONTEXT); // a run settles when it ends, in the background: last here
  });

  it('releases the reservation of a request the engine failed', async () => {
    const { key } = await limitedKey({ tokensPerDay: BUDGET });
    const failed = await chat(key, { model: 'broken-model' });
    assert.ok(failed.status >= 500, failed.text);
    await eventually('the reservation released', async () => (await remainingSeenBy(key)) === BUDGET);
  });

  it('charges a stream its client left what was generated, not its reservation', async () => {
    const { id, key } = await limitedKey({ tokensPerDay: BUDGET });
    const stream = await openStream(gw, CHAT, { model: 'slow-model', messages, max_tokens: 500, stream: true }, { 'x-api-key': key });
    await stream.until((items) => items.filter((i) => 'data' in i).length >= 3);
    stream.destroy();
    await eventually('the usage record of the abandoned stream', async () => (await tokensOf(id)).records === 1);
    const spent = (await tokensOf(id)).tokens;
    assert.ok(spent > 0 && spent < 500, `${spent} tokens`);
    assert.equal(await remainingSeenBy(key), BUDGET - spent);
  });

  it('keeps a month’s spend across a restart (the counter is seeded from the usage table)', async () => {
    const { id, key } = await limitedKey({ tokensPerMonth: BUDGET });
    await chat(key);
    await chat(key);
    const spent = (await tokensOf(id)).tokens;
    gw = await gw.restart();
    assert.equal(await remainingSeenBy(key), BUDGET - spent);
  });
});

describe('rate limits while Redis is down', { skip: redisServerMissing() }, () => {
  let redis: TestRedis;
  let gw: TestGateway;
  let fake: FakeEngine;
  let key: string;

  before(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI({ models: ['alpha-model'] });
    gw = await gatewayOver([fake], { REDIS_URL: redis.url });
    const t = await seedTenant(gw, 'rl-outage');
    const admin = await tokenFor(gw, t.admin.id, t.tenantId);
    const created = await createApiKey(gw, t.tenantId, 'outage');
    key = created.key;
    const patched = await gw.request('PATCH', `/api/auth/tenants/${t.tenantId}/api-keys/${created.id}`, {
      token: admin,
      json: { limits: { requestsPerMinute: 2 } },
    });
    assert.equal(patched.status, 200, patched.text);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.close();
  });

  it('holds the limit per replica (in-process) while Redis is unreachable, and goes back to Redis when it returns', async () => {
    const chat = () => gw.request('POST', CHAT, { apiKey: key, json: { messages, max_tokens: MAX_TOKENS } });
    assert.equal((await chat()).status, 200, 'on Redis');
    await redis.stop();
    await eventually('degraded', async () => (await gw.request('GET', '/health')).body.coordination.status === 'degraded');
    // Neither fail-open nor fail-closed: the in-process store takes over with a fresh count.
    assert.deepEqual([(await chat()).status, (await chat()).status, (await chat()).status], [200, 200, 429]);
    await redis.start();
    await eventually('recovered', async () => (await gw.request('GET', '/health')).body.coordination.status === 'ok', 10_000);
    // A fresh (flushed) Redis: the count starts over there.
    assert.equal((await chat()).status, 200);
  });
});
