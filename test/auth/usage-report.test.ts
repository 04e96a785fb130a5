// GET /api/auth/tenants/{tenantId}/usage: the sums match the chat requests made
// through the gateway against a fake engine (two keys, a user, two models, a failed
// request) and rows recorded on either side of a UTC midnight; every groupBy, the
// endpoint filter, the bound on groups, bad input as a 400 naming the field, and who
// may read it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver, usageRows } from '../llm/chat-support.js';
import { createApiKey } from '../gateway/support.js';
import { deleteApiKey, setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { UsageEntry } from '../../src/areas/llm/usage/recorder.js';
import type { Principal } from '../../src/platform/identity.js';

const USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

describe('tenant usage report', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  let tenantA: string;
  let tenantB: string;
  let adminA: { id: string; token: string };
  let adminB: string;
  let platformAdmin: string;
  let member: string;
  let key1: { id: string; key: string };
  let key2: { id: string; key: string };
  let failedPromptTokens: number;

  const usage = (tenantId: string, query = '', options: { token?: string; apiKey?: string } = { token: adminA.token }) =>
    gw.request('GET', `/api/auth/tenants/${tenantId}/usage${query}`, options);

  const chat = async (credential: { apiKey?: string; token?: string }, model: string, expected = 200) => {
    const response = await gw.request('POST', '/api/llm/v1/chat/completions', {
      ...credential,
      json: { model, messages: [{ role: 'user', content: 'how many tokens is this' }] },
    });
    assert.equal(response.status, expected, response.text);
  };

  /** A row written by the recorder itself, at a chosen time (the gateway cannot be asked to answer in the past). */
  const recordAt = (at: string, entry: Partial<UsageEntry>) =>
    gw.ctx.llm.usage.record({
      tenantId: tenantA,
      principalKind: 'apiKey',
      principalId: key1.id,
      endpoint: 'chat/completions',
      model: 'm-one',
      nodeId: null,
      stream: false,
      promptTokens: 0,
      completionTokens: 0,
      latencyMs: 5,
      status: 'ok',
      at: new Date(at),
      ...entry,
    });

  before(async () => {
    engine = await startFakeOpenAI({ models: ['m-one', 'm-two'], reply: 'four words of answer', usage: USAGE });
    gw = await gatewayOver([engine]);
    const a = await seedTenant(gw, 'usage');
    const b = await seedTenant(gw, 'usageb');
    const platform = await seedTenant(gw, 'usagep', ['admin', 'platform_admin']);
    tenantA = a.tenantId;
    tenantB = b.tenantId;
    adminA = { id: a.admin.id, token: await tokenFor(gw, a.admin.id, tenantA) };
    adminB = await tokenFor(gw, b.admin.id, tenantB);
    platformAdmin = await tokenFor(gw, platform.admin.id, platform.tenantId);
    member = await tokenFor(gw, (await seedUser(gw, tenantA)).id, tenantA);
    key1 = await createApiKey(gw, tenantA, 'first key');
    key2 = await createApiKey(gw, tenantA, 'second key');

    // Live requests: key1 3 × m-one, key2 1 × m-two and one that fails, the admin 1 × m-one; tenant B one of its own.
    for (let i = 0; i < 3; i++) await chat({ apiKey: key1.key }, 'm-one');
    await chat({ apiKey: key2.key }, 'm-two');
    engine.behaviour.status = 503;
    await chat({ apiKey: key2.key }, 'm-two', 503);
    delete engine.behaviour.status;
    await chat({ token: adminA.token }, 'm-one');
    await chat({ apiKey: (await createApiKey(gw, tenantB, 'b key')).key }, 'm-one');
    // A failed call records the prompt as the gateway counted it (the engine never said).
    const failed = (await usageRows(gw, tenantA)).filter((r) => r.status !== 'ok');
    assert.equal(failed.length, 1, 'one failed request recorded');
    failedPromptTokens = failed[0].prompt_tokens;

    // Either side of midnight UTC on 1–2 January 2026, an embedding on the 2nd, tenant B's row that must not count.
    recordAt('2026-01-01T23:59:59.999Z', { promptTokens: 100, completionTokens: 50 });
    recordAt('2026-01-02T00:00:00.000Z', { promptTokens: 200, status: 'engine_error' });
    recordAt('2026-01-02T12:00:00.000Z', { principalId: key2.id, endpoint: 'embeddings', model: 'embedder', promptTokens: 40 });
    recordAt('2026-01-02T13:00:00.000Z', { tenantId: tenantB, promptTokens: 1000 });
    // Queued only: the report must flush the recorder's queue before it reads.
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('sums per UTC day, in day order, across midnight, with the failed request as an error', async () => {
    const response = await usage(tenantA, '?from=2026-01-01&to=2026-01-03&groupBy=day');
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, {
      data: [
        { day: '2026-01-01', requests: 1, promptTokens: 100, completionTokens: 50, totalTokens: 150, errors: 0 },
        { day: '2026-01-02', requests: 2, promptTokens: 240, completionTokens: 0, totalTokens: 240, errors: 1 },
      ],
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-03T00:00:00.000Z',
      groupBy: 'day',
      truncated: false,
    });
    // `to` is exclusive and `from` inclusive, to the millisecond.
    const firstDay = await usage(tenantA, '?from=2026-01-01T23:59:59.999Z&to=2026-01-02T00:00:00Z');
    assert.deepEqual(
      firstDay.body.data.map((g: any) => [g.day, g.requests]),
      [['2026-01-01', 1]],
    );
    // Offsets are honoured: 01:00+01:00 is midnight UTC.
    const offset = await usage(tenantA, `?from=${encodeURIComponent('2026-01-02T01:00:00+01:00')}&to=2026-01-02T00:00:00.001Z`);
    assert.deepEqual(offset.body.data, [
      { day: '2026-01-02', requests: 1, promptTokens: 200, completionTokens: 0, totalTokens: 200, errors: 1 },
    ]);
  });

  it('filters by endpoint', async () => {
    const response = await usage(tenantA, '?from=2026-01-01&to=2026-01-03&groupBy=model&endpoint=embeddings');
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.endpoint, 'embeddings');
    assert.deepEqual(response.body.data, [
      { model: 'embedder', requests: 1, promptTokens: 40, completionTokens: 0, totalTokens: 40, errors: 0 },
    ]);
  });

  it('sums per model over the last 30 days by default, largest first', async () => {
    const before = Date.now();
    const response = await usage(tenantA, '?groupBy=model');
    assert.equal(response.status, 200, response.text);
    const to = Date.parse(response.body.to);
    assert.ok(to >= before - 1000 && to <= Date.now() + 1000, 'to defaults to now');
    assert.equal(to - Date.parse(response.body.from), 30 * 86_400_000, 'from defaults to 30 days before to');
    assert.deepEqual(response.body.data, [
      { model: 'm-one', requests: 4, promptTokens: 28, completionTokens: 12, totalTokens: 40, errors: 0 },
      {
        model: 'm-two',
        requests: 2,
        promptTokens: 7 + failedPromptTokens,
        completionTokens: 3,
        totalTokens: 10 + failedPromptTokens,
        errors: 1,
      },
    ]);
  });

  it('sums per key with its name and masked key, and per user; a deleted key keeps its numbers', async () => {
    const response = await usage(tenantA, '?groupBy=key');
    assert.equal(response.status, 200, response.text);
    const masked = (key: string) => (response.body.data as any[]).find((g) => g.principalId === key)?.maskedKey;
    assert.match(masked(key1.id), /\*|…|\.\.\./, 'a masked key, not the key');
    assert.ok(
      !JSON.stringify(response.body).includes(key1.key) && !JSON.stringify(response.body).includes(key2.key),
      'no key in the answer',
    );
    assert.deepEqual(response.body.data, [
      {
        principalKind: 'apiKey',
        principalId: key1.id,
        keyName: 'first key',
        maskedKey: masked(key1.id),
        requests: 3,
        promptTokens: 21,
        completionTokens: 9,
        totalTokens: 30,
        errors: 0,
      },
      {
        principalKind: 'apiKey',
        principalId: key2.id,
        keyName: 'second key',
        maskedKey: masked(key2.id),
        requests: 2,
        promptTokens: 7 + failedPromptTokens,
        completionTokens: 3,
        totalTokens: 10 + failedPromptTokens,
        errors: 1,
      },
      { principalKind: 'user', principalId: adminA.id, requests: 1, promptTokens: 7, completionTokens: 3, totalTokens: 10, errors: 0 },
    ]);

    const gone = await createApiKey(gw, tenantA, 'short-lived key');
    await chat({ apiKey: gone.key }, 'm-one');
    const admin: Principal = { tenantId: tenantA, kind: 'user', subject: adminA.id, roles: ['admin'], scopes: [] };
    await deleteApiKey(gw.ctx, admin, tenantA, gone.id);
    const after = await usage(tenantA, '?groupBy=key');
    const deleted = (after.body.data as any[]).find((g) => g.principalId === gone.id);
    assert.deepEqual(deleted, {
      principalKind: 'apiKey',
      principalId: gone.id,
      keyName: null,
      maskedKey: null,
      requests: 1,
      promptTokens: 7,
      completionTokens: 3,
      totalTokens: 10,
      errors: 0,
    });
  });

  it('keeps every tenant to its own numbers', async () => {
    const response = await usage(tenantB, '?from=2026-01-01&to=2026-01-03', { token: adminB });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(
      response.body.data.map((g: any) => [g.day, g.promptTokens]),
      [['2026-01-02', 1000]],
    );
    const models = await usage(tenantB, '?groupBy=model', { token: adminB });
    assert.deepEqual(
      models.body.data.map((g: any) => [g.model, g.requests]),
      [['m-one', 1]],
    );
  });

  it('answers at most 1,000 groups, largest first, and says it left some out', async () => {
    for (let i = 0; i < 1001; i++) recordAt('2025-06-01T12:00:00Z', { model: `bulk-${String(i).padStart(4, '0')}`, promptTokens: i + 1 });
    const response = await usage(tenantA, '?from=2025-06-01&to=2025-06-02&groupBy=model');
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.truncated, true);
    assert.equal(response.body.data.length, 1000);
    assert.equal(response.body.data[0].model, 'bulk-1000');
    assert.equal(response.body.data.at(-1).model, 'bulk-0001', 'the smallest group is the one left out');
    const byDay = await usage(tenantA, '?from=2025-06-01&to=2025-06-02&groupBy=day');
    assert.deepEqual(
      byDay.body.data.map((g: any) => [g.day, g.requests]),
      [['2025-06-01', 1001]],
    );
    assert.equal(byDay.body.truncated, false);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['?from=yesterday', 'from'],
      ['?from=2026-01-01T10:00:00', 'from'], // no time zone
      ['?to=2026-02-30', 'to'],
      ['?to=2026-01-01T24:00:00Z', 'to'],
      ['?from=1970-01-01&to=1970-01-02', 'from'],
      ['?from=2026-01-02&to=2026-01-01', 'from'],
      ['?from=2026-01-01&to=2026-01-01', 'from'],
      ['?from=2025-01-01&to=2026-01-03', 'from'], // 367 days
      ['?to=1999-12-31', 'to'],
      ['?groupBy=week', 'groupBy'],
      ['?endpoint=images', 'endpoint'],
      [`?from=${'9'.repeat(41)}`, 'from'],
      ['?groupBy=key&groupBy=model', 'groupBy'],
      ['?from=2026-01-01%00', 'from'],
      ["?endpoint=chat'%20OR%201=1--", 'endpoint'],
    ];
    for (const [query, field] of cases) {
      const response = await usage(tenantA, query);
      assert.equal(response.status, 400, `${query}: ${response.text}`);
      assert.equal(response.body.errors?.[0]?.field, field, `${query}: ${response.text}`);
    }
    // 366 days is the bound, inclusive.
    assert.equal((await usage(tenantA, '?from=2025-01-02&to=2026-01-03')).status, 200);
  });

  it('names the values a field takes when it gets another (issue 26: it said "must be equal to constant")', async () => {
    const endpoint = await usage(tenantA, '?endpoint=images');
    const values = '"chat/completions", "chat", "threads", "responses", "embeddings", "rerank", "completions"';
    assert.equal(endpoint.body.detail, `Validation failed: endpoint: must be one of ${values}`);
    assert.deepEqual(endpoint.body.errors, [{ field: 'endpoint', message: `must be one of ${values}` }]);
    const groupBy = await usage(tenantA, '?groupBy=week');
    assert.equal(groupBy.body.detail, 'Validation failed: groupBy: must be one of "key", "model", "day"');
  });

  it('is for the tenant admin and platform admins only', async () => {
    // The route-security matrix (test/gateway/route-security.test.ts) walks the route table: the route is there, as tenantAdmin.
    assert.ok(
      gw.app.routeTable.some((r) => r.method === 'GET' && r.url === '/api/auth/tenants/:tenantId/usage' && r.access === 'tenantAdmin'),
    );
    assert.equal((await usage(tenantA, '', {})).status, 401, 'no credential');
    assert.equal((await usage(tenantA, '', { token: member })).status, 403, 'member');
    assert.equal((await usage(tenantA, '', { apiKey: key1.key })).status, 403, 'API key');
    assert.equal((await usage(tenantB, '', { apiKey: key1.key })).status, 403, "API key on another tenant's report");
    assert.equal((await usage(tenantA, '', { token: adminB })).status, 404, "another tenant's admin");
    assert.equal((await usage('ten_doesnotexist', '', { token: platformAdmin })).status, 404, 'a tenant that does not exist');
    const platform = await usage(tenantA, '?groupBy=model', { token: platformAdmin });
    assert.equal(platform.status, 200, platform.text);
    assert.equal(platform.body.data[0].model, 'm-one');

    const revoked = await createApiKey(gw, tenantA, 'revoked');
    const admin: Principal = { tenantId: tenantA, kind: 'user', subject: adminA.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, tenantA, revoked.id, 'revoked');
    assert.equal((await usage(tenantA, '', { apiKey: revoked.key })).status, 401, 'revoked key');
  });
});
