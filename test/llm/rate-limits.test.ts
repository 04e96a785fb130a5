// Rate limits and token budgets on the requests that reach a model: requests and
// tokens per minute (GCRA), day budgets with concurrent requests racing the last unit,
// JSON and streams, key and tenant scopes. Run in-process, and again on Redis where
// TEST_REDIS_URL is set (.ci/run). Two replicas sharing one limit: test/replicas/rate-limits.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver, openStream } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const messages = [{ role: 'user', content: 'hello there' }];
/** What each request reserves against a budget: its messages' JSON length / 3, plus max_tokens. */
const MAX_TOKENS = 20;
const RESERVATION = Math.ceil(JSON.stringify(messages).length / 3) + MAX_TOKENS;

const variants: { name: string; env: Record<string, string>; skip: string | false }[] = [
  { name: 'in-process', env: {}, skip: false },
  {
    name: 'on Redis',
    env: process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {},
    skip: process.env.TEST_REDIS_URL ? false : 'TEST_REDIS_URL is not set (.ci/run sets it)',
  },
];

for (const variant of variants) {
  describe(`rate limits and budgets (${variant.name})`, { skip: variant.skip }, () => {
    let gw: TestGateway;
    let fake: FakeEngine;
    let slow: FakeEngine;
    let tenantId: string, adminToken: string, platformToken: string;

    const chat = (apiKey: string, extra: Record<string, unknown> = {}) =>
      gw.request('POST', CHAT, { apiKey, json: { messages, max_tokens: MAX_TOKENS, ...extra } });
    /** A new key of the tenant with these limits. */
    const limitedKey = async (limits: Record<string, number>, tenant = tenantId, token = adminToken) => {
      const created = await createApiKey(gw, tenant, 'limited');
      const patched = await gw.request('PATCH', `/api/auth/tenants/${tenant}/api-keys/${created.id}`, { token, json: { limits } });
      assert.equal(patched.status, 200, patched.text);
      return created;
    };
    /** Tokens the usage table holds for a key (after this process's queue is written). */
    const keyTokens = async (keyId: string) => {
      await gw.ctx.llm.usage.flush();
      const [row] = await gw.ctx.db.query<{ n: number }>(
        `SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n, count(*)::int AS c FROM usage_records WHERE principal_id = $1`,
        [keyId],
      );
      return Number(row!.n);
    };
    const usageCount = async (keyId: string) => {
      await gw.ctx.llm.usage.flush();
      const [row] = await gw.ctx.db.query<{ c: number }>(`SELECT count(*)::int AS c FROM usage_records WHERE principal_id = $1`, [keyId]);
      return row!.c;
    };

    before(async () => {
      fake = await startFakeOpenAI({ models: ['alpha-model'] });
      // Streams that stay open a while, so concurrent ones overlap.
      slow = await startFakeOpenAI({ models: ['slow-model'], tokenDelayMs: 60 });
      gw = await gatewayOver([fake, slow], { GATEWAY_USAGE_FLUSH_SECONDS: '3600', ...variant.env });
      const t = await seedTenant(gw, 'rl');
      tenantId = t.tenantId;
      adminToken = await tokenFor(gw, t.admin.id, tenantId);
      const platform = await seedTenant(gw, 'rl-platform', ['platform_admin']);
      platformToken = await tokenFor(gw, platform.admin.id, platform.tenantId);
    });
    after(async () => {
      await gw?.close();
      await Promise.all([fake?.close(), slow?.close()]);
    });

    it('sends no X-RateLimit headers when no limit is configured', async () => {
      const { key } = await createApiKey(gw, tenantId, 'free');
      const response = await chat(key);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers.get('x-ratelimit-limit'), null);
      assert.equal(response.headers.get('x-ratelimit-limit-tokens'), null);
    });

    it('answers N requests per minute with the headers, then 429 with Retry-After naming key.requestsPerMinute, before the engine', async () => {
      const { key } = await limitedKey({ requestsPerMinute: 3 });
      const engineCalls = fake.chatRequests();
      for (const remaining of ['2', '1', '0']) {
        const response = await chat(key);
        assert.equal(response.status, 200, response.text);
        assert.equal(response.headers.get('x-ratelimit-limit'), '3');
        assert.equal(response.headers.get('x-ratelimit-remaining'), remaining);
        assert.ok(Number(response.headers.get('x-ratelimit-reset')) >= 1);
        assert.equal(response.headers.get('x-ratelimit-limit-tokens'), null, 'no token limit configured');
      }
      for (const extra of [{}, { stream: true }]) {
        const refused = await chat(key, extra);
        assert.equal(refused.status, 429, refused.text);
        const retryAfter = Number(refused.headers.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${refused.headers.get('retry-after')}`);
        assert.equal(refused.headers.get('x-ratelimit-limit'), '3');
        assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
        assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal(refused.body.code, 'TOO_MANY_REQUESTS');
        assert.match(refused.body.detail, /key\.requestsPerMinute/);
        assert.equal(refused.body.error.type, 'rate_limit_error', 'the OpenAI-shaped error object of /api/llm/v1');
      }
      assert.equal(fake.chatRequests() - engineCalls, 3, 'refused requests never reach the engine');
    });

    it('puts the headers in a stream’s head', async () => {
      const { key } = await limitedKey({ requestsPerMinute: 5, tokensPerDay: 100_000 });
      const stream = await openStream(gw, CHAT, { messages, max_tokens: MAX_TOKENS, stream: true }, { 'x-api-key': key });
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['x-ratelimit-limit'], '5');
      assert.equal(stream.headers['x-ratelimit-remaining'], '4');
      assert.equal(stream.headers['x-ratelimit-limit-tokens'], '100000');
      assert.equal(stream.headers['x-ratelimit-remaining-tokens'], String(100_000 - RESERVATION));
      await stream.end();
    });

    it('lifts a requests-per-minute limit after Retry-After', async () => {
      const { key } = await limitedKey({ requestsPerMinute: 60 });
      const started = Date.now();
      let admitted = 0;
      let refused: Awaited<ReturnType<typeof chat>> | undefined;
      while (!refused) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => chat(key)));
        admitted += batch.filter((r) => r.status === 200).length;
        refused = batch.find((r) => r.status === 429);
      }
      // GCRA: a burst of 60, then one a second.
      assert.ok(admitted >= 60 && admitted <= 60 + Math.ceil((Date.now() - started) / 1000) + 1, `${admitted} admitted`);
      const wait = Number(refused.headers.get('retry-after'));
      assert.equal(wait, 1);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 50));
      const again = await chat(key);
      assert.equal(again.status, 200, again.text);
    });

    it('refuses on tokens per minute once a request has spent the bucket, counting the actual tokens', async () => {
      const { id, key } = await limitedKey({ tokensPerMinute: 5 });
      const first = await chat(key);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '5');
      assert.equal(first.headers.get('x-ratelimit-remaining-tokens'), '5', 'tokens are charged when the request ends');
      assert.ok((await keyTokens(id)) > 5, 'the answer used more than the bucket holds');
      await eventually('the bucket in debt', async () => {
        const next = await chat(key);
        if (next.status === 200) return false;
        assert.equal(next.status, 429, next.text);
        assert.match(next.body.detail, /key\.tokensPerMinute/);
        assert.ok(Number(next.headers.get('retry-after')) >= 1);
        assert.equal(next.headers.get('x-ratelimit-remaining-tokens'), '0');
        return true;
      });
    });

    it('lets exactly one of 10 concurrent JSON requests take the last unit of a day budget (seeded from the usage table)', async () => {
      const { id, key } = await createApiKey(gw, tenantId, 'budget-json');
      for (let i = 0; i < 2; i++) assert.equal((await chat(key)).status, 200);
      const spent = await keyTokens(id);
      const patched = await gw.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${id}`, {
        token: adminToken,
        json: { limits: { tokensPerDay: spent + 1 } },
      });
      assert.equal(patched.status, 200, patched.text);
      const answers = await Promise.all(Array.from({ length: 10 }, () => chat(key)));
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, ...Array(9).fill(429)], JSON.stringify(statuses));
      for (const refused of answers.filter((r) => r.status === 429)) assert.match(refused.body.detail, /key\.tokensPerDay/);
      // Overrun by at most the one request's worth; afterwards spent until the UTC day ends.
      const after = await keyTokens(id);
      assert.ok(after > spent + 1 && after - spent <= RESERVATION, `spent ${spent} → ${after}`);
      const late = await chat(key);
      assert.equal(late.status, 429);
      const untilMidnight = Math.ceil((Date.UTC(...utcDayAfter()) - Date.now()) / 1000);
      assert.ok(Math.abs(Number(late.headers.get('retry-after')) - untilMidnight) <= 5, late.headers.get('retry-after') ?? '');
    });

    it('holds a tenant budget for concurrent streams of users and keys: admitted while reservations fit, never overrun by more than one request', async () => {
      const t = await seedTenant(gw, 'rl-streams');
      const member = await tokenFor(gw, (await seedUser(gw, t.tenantId)).id, t.tenantId);
      const { key } = await createApiKey(gw, t.tenantId, 'streams');
      const budget = 2 * RESERVATION;
      const set = await gw.request('PATCH', `/api/auth/tenants/${t.tenantId}`, {
        token: platformToken,
        json: { limits: { tokensPerDay: budget } },
      });
      assert.equal(set.status, 200, set.text);
      const json = { model: 'slow-model', messages, max_tokens: MAX_TOKENS, stream: true };
      const streams = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          openStream(gw, CHAT, json, i % 2 ? { 'x-api-key': key } : { authorization: `Bearer ${member}` }),
        ),
      );
      await Promise.all(streams.map((s) => s.end()));
      // Each reservation fits the budget exactly twice while the slow streams hold theirs.
      assert.equal(streams.filter((s) => s.status === 200).length, 2, streams.map((s) => s.status).join(','));
      assert.ok(streams.filter((s) => s.status === 429).every((s) => s.headers['retry-after']));
      await gw.ctx.llm.usage.flush();
      const [row] = await gw.ctx.db.query<{ n: number }>(
        'SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS n FROM usage_records WHERE tenant_id = $1',
        [t.tenantId],
      );
      assert.ok(Number(row!.n) <= budget + RESERVATION, `${row!.n} tokens against a budget of ${budget}`);
    });

    it('counts a stream’s tokens when it ends', async () => {
      const budget = 100_000;
      const { id, key } = await limitedKey({ tokensPerDay: budget });
      const stream = await openStream(
        gw,
        CHAT,
        { model: 'slow-model', messages, max_tokens: MAX_TOKENS, stream: true },
        { 'x-api-key': key },
      );
      assert.equal(stream.headers['x-ratelimit-remaining-tokens'], String(budget - RESERVATION));
      // While it runs, its reservation holds the budget.
      const during = await chat(key);
      assert.equal(during.headers.get('x-ratelimit-remaining-tokens'), String(budget - 2 * RESERVATION));
      await stream.end();
      await eventually('both usage records', async () => (await usageCount(id)) === 2);
      const spent = await keyTokens(id);
      const later = await chat(key);
      assert.equal(later.headers.get('x-ratelimit-remaining-tokens'), String(budget - spent - RESERVATION));
    });

    it('applies a tenant’s limits to its users and keys together, a key’s own first, and drops them when cleared', async () => {
      const t = await seedTenant(gw, 'rl-tenant');
      const admin = await tokenFor(gw, t.admin.id, t.tenantId);
      const member = await tokenFor(gw, (await seedUser(gw, t.tenantId)).id, t.tenantId);
      const { key } = await createApiKey(gw, t.tenantId, 'tenant-limited');
      const path = `/api/auth/tenants/${t.tenantId}`;
      assert.equal((await gw.request('PATCH', path, { token: platformToken, json: { limits: { requestsPerMinute: 3 } } })).status, 200);
      const asMember = () => gw.request('POST', CHAT, { token: member, json: { messages, max_tokens: MAX_TOKENS } });
      const statuses = [(await asMember()).status, (await chat(key)).status, (await asMember()).status];
      assert.deepEqual(statuses, [200, 200, 200]);
      for (const refused of [await chat(key), await asMember()]) {
        assert.equal(refused.status, 429, refused.text);
        assert.match(refused.body.detail, /tenant\.requestsPerMinute/);
      }
      const strict = await limitedKey({ requestsPerMinute: 1 }, t.tenantId, admin);
      assert.equal((await gw.request('PATCH', path, { token: platformToken, json: { limits: { requestsPerMinute: 1000 } } })).status, 200);
      const raised = await asMember();
      assert.equal(raised.status, 200, 'a raised limit starts a fresh bucket');
      assert.equal(raised.headers.get('x-ratelimit-limit'), '1000');
      assert.equal((await chat(strict.key)).status, 200);
      const keyFirst = await chat(strict.key);
      assert.equal(keyFirst.status, 429);
      assert.match(keyFirst.body.detail, /key\.requestsPerMinute/);
      assert.equal((await gw.request('PATCH', path, { token: platformToken, json: { limits: {} } })).status, 200);
      const free = await asMember();
      assert.equal(free.status, 200, 'cleared at once (the invalidation reached the cache)');
      assert.equal(free.headers.get('x-ratelimit-limit'), null);
    });

    it('counts embeddings and completions too', async () => {
      const { key } = await limitedKey({ requestsPerMinute: 1 });
      const first = await gw.request('POST', '/api/llm/v1/embeddings', { apiKey: key, json: { model: 'alpha-model', input: 'hi' } });
      assert.notEqual(first.status, 429, first.text);
      for (const [path, json] of [
        ['/api/llm/v1/embeddings', { model: 'alpha-model', input: 'hi' }],
        ['/api/llm/v1/completions', { model: 'alpha-model', prompt: 'hi' }],
      ] as const) {
        const refused = await gw.request('POST', path, { apiKey: key, json });
        assert.equal(refused.status, 429, `${path}: ${refused.text}`);
      }
    });
  });
}

function utcDayAfter(): [number, number, number] {
  const now = new Date();
  return [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1];
}
