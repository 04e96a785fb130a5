import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type TestGateway, type TestResponse } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { generateApiKey } from '../../src/areas/auth/api-keys/key-format.js';
import { apiKeyRepository } from '../../src/areas/auth/api-keys/repository.js';
import { checkNewApiKey } from '../../src/areas/auth/api-keys/service.js';
import { mintInternalToken, verifyInternalToken } from '../../src/platform/internal-token.js';

/** Status and body of a problem response, minus what differs per request. */
function comparable(response: TestResponse) {
  const { correlationId, ...body } = response.body ?? {};
  assert.equal(typeof correlationId, 'string');
  return { status: response.status, contentType: response.headers.get('content-type'), body };
}

describe('auth api keys', () => {
  let gw: TestGateway;
  let tenantA: string;
  let tenantB: string;
  let adminA: string;
  let adminB: string;
  let memberA: string;
  let platformAdmin: string;
  let workspaceA: string;
  const plaintexts: string[] = [];

  const keysPath = (tenantId: string) => `/api/auth/tenants/${tenantId}/api-keys`;
  async function createKey(json: Record<string, unknown>, token = adminA, tenantId = tenantA) {
    const response = await gw.request('POST', keysPath(tenantId), { token, json });
    assert.equal(response.status, 201, response.text);
    plaintexts.push(response.body.key);
    return response.body as { id: string; key: string; [field: string]: unknown };
  }
  const workspacesWith = (key: string) => gw.request('GET', '/api/os/workspaces', { apiKey: key });

  before(async () => {
    // No timed flush of lastUsedAt during the run: the query counts below must be exact.
    gw = await startGateway({ GATEWAY_LAST_USED_FLUSH_SECONDS: '3600' });
    const world = await seedWorld(gw, 'keys');
    tenantA = world.a.tenantId;
    tenantB = world.b.tenantId;
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    platformAdmin = world.platform.admin.token;
    memberA = world.a.member.token;
    const ws = await gw.request('POST', '/api/os/workspaces', { token: adminA, json: { name: 'A only' } });
    workspaceA = ws.body.id;
  });
  after(() => gw.close());

  it('creates a key per spec 2.2 and shows the plaintext only in that response', async () => {
    const created = await createKey({ name: 'ci', scopes: ['llm:read', 'llm:write'], customerId: 'cus_42' });
    assert.match(created.id, /^key_/);
    assert.match(created.key, /^rdk_[A-Za-z0-9_-]{40,}$/);
    assert.equal(created.name, 'ci');
    assert.equal(created.status, 'active');
    assert.equal(created.scopes, '["llm:read","llm:write"]');
    assert.deepEqual(JSON.parse(created.scopes as string), ['llm:read', 'llm:write']);
    assert.equal(created.customerId, 'cus_42');
    assert.equal(created.lastUsedAt, null);
    assert.ok(!Number.isNaN(Date.parse(created.createdAt as string)));
    assert.equal('expiresAt' in created, false, 'no expiresAt without one given');

    // Start and end visible, the middle not.
    const masked = created.maskedKey as string;
    assert.ok(masked.startsWith(created.key.slice(0, 8)) && masked.endsWith(created.key.slice(-4)), masked);
    assert.ok(masked.length < 16 && !masked.includes(created.key.slice(8, -4)));

    const plain = await createKey({ name: 'no extras' });
    assert.equal(plain.scopes, '[]');
    assert.equal('customerId' in plain, false);

    const list = await gw.request('GET', keysPath(tenantA), { token: adminA });
    assert.equal(list.status, 200);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.id);
    const { key: _plaintext, ...withoutKey } = created;
    assert.deepEqual(listed, withoutKey);
    assert.ok(list.body.data.every((k: object) => !('key' in k)));
    assert.ok(!list.text.includes(created.key) && !list.text.includes(plain.key));

    const got = await gw.request('GET', `${keysPath(tenantA)}/${created.id}`, { token: adminA });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, withoutKey);
    assert.ok(!got.text.includes(created.key));

    // Stored only as a keyed hash: no column holds the plaintext.
    const rows = await gw.ctx.db.query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    assert.ok(!JSON.stringify(rows).includes(created.key));
    assert.equal((rows[0] as { key_hash: string }).key_hash, gw.ctx.secrets.hash('api-key', created.key));
  });

  it('works as X-API-Key and as Authorization: Bearer, and resolves its own tenant', async () => {
    const keyA = (await createKey({ name: 'both ways' })).key;
    const keyB = (await createKey({ name: 'tenant b' }, adminB, tenantB)).key;
    const viaHeader = await workspacesWith(keyA);
    const viaBearer = await gw.request('GET', '/api/os/workspaces', { token: keyA });
    for (const response of [viaHeader, viaBearer]) {
      assert.equal(response.status, 200);
      assert.deepEqual(
        response.body.data.map((w: { id: string }) => w.id),
        [workspaceA],
      );
    }
    const other = await workspacesWith(keyB);
    assert.equal(other.status, 200);
    assert.deepEqual(other.body.data, []);
  });

  it('gives missing, unknown, malformed, expired, revoked and deleted keys the same 401', async () => {
    const expiring = await createKey({ name: 'short-lived', expiresAt: new Date(Date.now() + 1500).toISOString() });
    assert.equal(typeof expiring.expiresAt, 'string');
    assert.equal((await workspacesWith(expiring.key)).status, 200, 'works before it expires (and is now cached)');
    const revoked = await createKey({ name: 'to revoke' });
    const deleted = await createKey({ name: 'to delete' });
    assert.equal((await workspacesWith(revoked.key)).status, 200);
    assert.equal((await workspacesWith(deleted.key)).status, 200);
    assert.equal((await gw.request('POST', `${keysPath(tenantA)}/${revoked.id}/revoke`, { token: adminA })).status, 200);
    assert.equal((await gw.request('DELETE', `${keysPath(tenantA)}/${deleted.id}`, { token: adminA })).status, 204);

    const valid = revoked.key;
    const flipped = valid.slice(0, 10) + (valid[10] === 'A' ? 'B' : 'A') + valid.slice(11); // checksum no longer matches
    await sleep(Math.max(0, Date.parse(expiring.expiresAt as string) - Date.now() + 50));

    const cases: Record<string, TestResponse> = {
      missing: await gw.request('GET', '/api/os/workspaces'),
      unknown: await workspacesWith(generateApiKey()),
      malformed: await workspacesWith(flipped),
      garbage: await workspacesWith('rdk_not-a-key'),
      expired: await workspacesWith(expiring.key),
      revoked: await workspacesWith(revoked.key),
      revokedAsBearer: await gw.request('GET', '/api/os/workspaces', { token: revoked.key }),
      deleted: await workspacesWith(deleted.key),
    };
    const reference = comparable(cases.missing!);
    assert.equal(reference.status, 401);
    assert.equal(reference.contentType, 'application/problem+json; charset=utf-8');
    for (const [name, response] of Object.entries(cases)) assert.deepEqual(comparable(response), reference, name);
  });

  it('revoke answers 401 at once, activate 200 at once, delete for good', async () => {
    const created = await createKey({ name: 'toggle' });
    const keyPath = `${keysPath(tenantA)}/${created.id}`;
    assert.equal((await workspacesWith(created.key)).status, 200); // now cached

    const revoked = await gw.request('POST', `${keyPath}/revoke`, { token: adminA });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.status, 'revoked');
    assert.equal('key' in revoked.body, false);
    assert.equal((await workspacesWith(created.key)).status, 401);
    assert.equal((await gw.request('POST', `${keyPath}/revoke`, { token: adminA })).body.status, 'revoked', 'revoke is idempotent');
    assert.equal((await gw.request('GET', keyPath, { token: adminA })).body.status, 'revoked');

    // A body-less POST with a JSON content type is accepted as "no body".
    const activated = await gw.request('POST', `${keyPath}/activate`, { token: adminA, headers: { 'content-type': 'application/json' } });
    assert.equal(activated.status, 200);
    assert.equal(activated.body.status, 'active');
    assert.equal((await workspacesWith(created.key)).status, 200);

    assert.equal((await gw.request('DELETE', keyPath, { token: adminA })).status, 204);
    assert.equal((await workspacesWith(created.key)).status, 401);
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/revoke'],
      ['POST', '/activate'],
    ] as const) {
      assert.equal((await gw.request(method, keyPath + suffix, { token: adminA })).status, 404, `${method} ${suffix} after delete`);
    }
    assert.equal((await gw.request('GET', `${keysPath(tenantA)}/not-a-key-id`, { token: adminA })).status, 404);
  });

  it('does no database query on the cached key path', async () => {
    const { key } = await createKey({ name: 'hot path' });
    const N = 25;
    const queries = () => gw.ctx.db.stats.queries;

    // The first use reads the key once (and the handler lists workspaces once).
    let before = queries();
    assert.equal((await workspacesWith(key)).status, 200);
    assert.equal(queries() - before, 2, 'cold: key lookup + the list');

    // Warm: exactly the handler's one query per request, none for the key, none for lastUsedAt.
    before = queries();
    for (let i = 0; i < N; i++) {
      const response = i % 2 ? await workspacesWith(key) : await gw.request('GET', '/api/os/workspaces', { token: key });
      assert.equal(response.status, 200);
    }
    assert.equal(queries() - before, N);

    // A route whose handler does no query (an API key may not manage keys: 403 before
    // any lookup) shows the authenticated edge path alone costs zero queries.
    before = queries();
    for (let i = 0; i < N; i++) assert.equal((await gw.request('GET', keysPath(tenantA), { apiKey: key })).status, 403);
    assert.equal(queries() - before, 0);
  });

  it('rejects malformed keys without a database query, and looks an unknown key up once', async () => {
    const { key } = await createKey({ name: 'typo source' });
    assert.equal((await workspacesWith(key)).status, 200); // cached: a typo of it must not ride on that entry
    const typo = key.slice(0, 10) + (key[10] === 'A' ? 'B' : 'A') + key.slice(11);
    const queries = () => gw.ctx.db.stats.queries;
    let before = queries();
    for (let round = 0; round < 2; round++) {
      for (const bad of [typo, 'rdk_not-a-key', `rdk_${'x'.repeat(48)}`, `${key}x`])
        assert.equal((await workspacesWith(bad)).status, 401, bad);
    }
    assert.equal(queries() - before, 0, 'the checksum rejects junk before the database');

    const unknown = generateApiKey();
    before = queries();
    assert.equal((await workspacesWith(unknown)).status, 401);
    assert.equal(queries() - before, 1, 'a well-formed unknown key is looked up');
    before = queries();
    for (let i = 0; i < 5; i++) assert.equal((await workspacesWith(unknown)).status, 401);
    assert.equal(queries() - before, 0, 'then answered from the negative cache');
  });

  it('records lastUsedAt in batches, not with a write per request', async () => {
    const created = await createKey({ name: 'used' });
    const start = Date.now();
    for (let i = 0; i < 3; i++) assert.equal((await workspacesWith(created.key)).status, 200);
    const unflushed = await gw.request('GET', `${keysPath(tenantA)}/${created.id}`, { token: adminA });
    assert.equal(unflushed.body.lastUsedAt, null, 'nothing written per request');

    const before = gw.ctx.db.stats.queries;
    await gw.ctx.auth.lastUsed.flush();
    assert.equal(gw.ctx.db.stats.queries - before, 1, 'one statement for the whole batch');
    const flushed = await gw.request('GET', `${keysPath(tenantA)}/${created.id}`, { token: adminA });
    const usedAt = Date.parse(flushed.body.lastUsedAt);
    assert.ok(usedAt >= start - 1000 && usedAt <= Date.now() + 1000, flushed.body.lastUsedAt);
  });

  it('stores scopes and forwards them as claims without enforcing them (spec 5.3)', async () => {
    const created = await createKey({ name: 'scoped', scopes: ['llm:read', 'llm:read'], customerId: 'cus_7' });
    assert.equal(created.scopes, '["llm:read"]', 'duplicates dropped');
    const principal = await gw.ctx.auth.credentials.resolveApiKey(created.key);
    assert.deepEqual(principal, {
      tenantId: tenantA,
      kind: 'apiKey',
      subject: created.id,
      roles: [],
      scopes: ['llm:read'],
      customerId: 'cus_7',
    });
    const claims = verifyInternalToken(
      gw.ctx.secrets.internalTokenKey,
      mintInternalToken(gw.ctx.secrets.internalTokenKey, principal!, 'cid-1'),
    );
    assert.deepEqual(claims?.principal.scopes, ['llm:read']);
    assert.equal(claims?.principal.customerId, 'cus_7');
    // A read-only scope does not stop a write: scopes are not a security boundary.
    const write = await gw.request('POST', '/api/os/workspaces', { apiKey: created.key, json: { name: 'by a read key' } });
    assert.equal(write.status, 201);
  });

  it('rejects malformed input with 400 naming the field, without coercing types', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'name'],
      [{ name: 123 }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x', scopes: 'x' }, 'scopes'],
      [{ name: 'x', scopes: [1] }, 'scopes[0]'],
      [{ name: 'x', scopes: ['has space'] }, 'scopes[0]'],
      [{ name: 'x', expiresAt: 'yesterday' }, 'expiresAt'],
      [{ name: 'x', expiresAt: 1893456000000 }, 'expiresAt'],
      [{ name: 'x', expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ name: 'x', customerId: 5 }, 'customerId'],
    ];
    for (const [json, field] of cases) {
      const response = await gw.request('POST', keysPath(tenantA), { token: adminA, json });
      assert.equal(response.status, 400, JSON.stringify(json));
      assert.equal(response.body.code, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} → ${response.text}`,
      );
    }
    const list = await gw.request('GET', keysPath(tenantA), { token: adminA });
    assert.ok(!list.body.data.some((k: { name: string }) => k.name === 'x'), 'nothing was created');
  });

  it('lets only administrators of the tenant manage keys', async () => {
    const { key } = await createKey({ name: 'not a manager' });
    assert.equal((await gw.request('GET', keysPath(tenantA))).status, 401);
    assert.equal((await gw.request('POST', keysPath(tenantA), { apiKey: key, json: { name: 'by key' } })).status, 403);
    assert.equal((await gw.request('GET', keysPath(tenantA), { token: key })).status, 403);
    assert.equal((await gw.request('GET', keysPath(tenantA), { token: memberA })).status, 403);
    assert.equal((await gw.request('POST', keysPath(tenantA), { token: memberA, json: { name: 'by member' } })).status, 403);

    // A platform admin manages any tenant's keys.
    const byPlatform = await createKey({ name: 'by platform admin' }, platformAdmin, tenantA);
    assert.equal((await workspacesWith(byPlatform.key)).body.data[0].id, workspaceA);
    assert.equal((await gw.request('POST', `${keysPath(tenantA)}/${byPlatform.id}/revoke`, { token: platformAdmin })).status, 200);
    assert.equal((await gw.request('GET', keysPath('ten_00000000000000000000000000'), { token: platformAdmin })).status, 404);
    assert.equal((await gw.request('POST', keysPath('nope'), { token: platformAdmin, json: { name: 'x' } })).status, 404);
  });

  it("never shows or changes another tenant's keys", async () => {
    const mine = await createKey({ name: 'A secret' });
    const keyPath = `${keysPath(tenantA)}/${mine.id}`;
    const countBefore = (await gw.request('GET', keysPath(tenantA), { token: adminA })).body.data.length;
    const attempts: [string, string, unknown?][] = [
      ['GET', keysPath(tenantA)],
      ['POST', keysPath(tenantA), { name: 'planted' }],
      ['GET', keyPath],
      ['POST', `${keyPath}/revoke`],
      ['POST', `${keyPath}/activate`],
      ['DELETE', keyPath],
      // B's own tenant in the path, A's key id: still not found.
      ['GET', `${keysPath(tenantB)}/${mine.id}`],
      ['POST', `${keysPath(tenantB)}/${mine.id}/revoke`],
      ['DELETE', `${keysPath(tenantB)}/${mine.id}`],
    ];
    for (const [method, path, json] of attempts) {
      const response = await gw.request(method, path, { token: adminB, ...(json ? { json } : {}) });
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    const after = await gw.request('GET', keyPath, { token: adminA });
    assert.equal(after.body.status, 'active');
    assert.equal((await gw.request('GET', keysPath(tenantA), { token: adminA })).body.data.length, countBefore);
    assert.equal((await workspacesWith(mine.key)).status, 200);
  });

  // Regression: with a connection pool, a revoke on another connection can commit and
  // publish its invalidation while a validation's SELECT (which read the key as active)
  // is still in flight; the validator then cached the stale row and the revoked key kept
  // working for the whole TTL. Staged here in that order: read sent, invalidation
  // delivered, read answered, row revoked (its invalidation being the one delivered).
  it('does not cache a validation that overlapped an invalidation', async () => {
    const created = await createKey({ name: 'racing' });
    const inFlight = gw.ctx.auth.apiKeys.resolve(created.key);
    await gw.ctx.bus.publish({ kind: 'apiKey', id: created.id });
    assert.ok(await inFlight, 'the overlapping call itself still answers from its read');
    await apiKeyRepository.setStatus(gw.ctx.db, tenantA, created.id, 'revoked');
    assert.equal(await gw.ctx.auth.apiKeys.resolve(created.key), undefined, 'the next call reads again and sees the revoke');
    assert.equal((await workspacesWith(created.key)).status, 401);
  });

  it('never writes a plaintext key to the log', async () => {
    assert.ok(plaintexts.length > 10);
    const logs = gw.logs();
    assert.ok(logs.length > 0);
    for (const key of plaintexts) assert.ok(!logs.includes(key), 'plaintext key in logs');
    assert.ok(!logs.includes('rdk_'), 'no key prefix anywhere in logs');
  });
  // Regression: the route and the CLI once had two scope rules that disagreed
  // (`models/read` passed one and failed the other). Both now use checkNewApiKey.
  it('applies one set of rules to new keys, whichever way they are created', async () => {
    const cases = [
      { name: 'ok', scopes: ['llm:read', 'models/read', 'llm.*'] },
      { name: 'ok', scopes: ['-leading-dash'] },
      { name: 'ok', scopes: ['.hidden'] },
      { name: 'ok', scopes: ['has space'] },
      { name: 'ok', scopes: ['x'.repeat(101)] },
      { name: '   ' },
      { name: 'ok', expiresAt: '2031-01-01' },
      { name: 'ok', expiresAt: '2031-01-01T00:00:00Z' },
    ];
    for (const input of cases) {
      let expected = 201;
      try {
        checkNewApiKey(input);
      } catch {
        expected = 400;
      }
      const response = await gw.request('POST', keysPath(tenantA), { token: adminA, json: input });
      assert.equal(response.status, expected, JSON.stringify(input));
    }
  });
});
