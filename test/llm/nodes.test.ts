// /api/llm/v1/nodes: CRUD, who sees and changes what, URL rules, secrets, and the
// router following every change at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';

const NODE_KEY = 'sk-node-secret-7f3a9c2e51';

describe('llm nodes API', () => {
  let gw: TestGateway;
  let configured: FakeEngine;
  let extra: FakeEngine;
  let platform: string;
  let tenantA: string, adminA: string, memberA: string, keyA: string, revokedKeyA: string;
  let tenantB: string, adminB: string;
  const texts: string[] = []; // every response body, searched for the node key at the end

  const call = async (method: string, path: string, options: Parameters<TestGateway['request']>[2] = {}) => {
    const response = await gw.request(method, `/api/llm/v1${path}`, options);
    texts.push(response.text);
    return response;
  };

  before(async () => {
    configured = await startFakeOpenAI({ models: ['cfg-model'] });
    extra = await startFakeOpenAI({ models: ['extra-model'] });
    gw = await startGateway({
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: configured.url, name: 'configured', apiKey: 'sk-config-secret-0b1c' }]),
      GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '3600',
      // The fakes listen on loopback, which tenant admins may not use by default:
      // here the tenant deny list is a private range the tests probe explicitly.
      GATEWAY_TENANT_NODE_DENY_CIDRS: '10.0.0.0/8,fc00::/7',
    });
    const world = await seedWorld(gw, 'nodes');
    platform = world.platform.admin.token;
    tenantA = world.a.tenantId;
    tenantB = world.b.tenantId;
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    memberA = world.a.member.token;
    keyA = world.a.key.key;
    const revoked = await createApiKey(gw, tenantA, 'revoked');
    const admin: Principal = { tenantId: tenantA, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, tenantA, revoked.id, 'revoked');
    revokedKeyA = revoked.key;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([configured?.close(), extra?.close()]);
  });

  it('lists the config node and the local engine, read-only, with stable ids', async () => {
    const list = await call('GET', '/nodes', { token: platform });
    assert.equal(list.status, 200);
    const [cfg, local] = list.body.data;
    assert.match(cfg.id, /^node_0{10}[0-9A-Z]{16}$/);
    assert.deepEqual(
      {
        name: cfg.name,
        engine: cfg.engine,
        url: cfg.url,
        source: cfg.source,
        editable: cfg.editable,
        hasApiKey: cfg.hasApiKey,
        tenantIds: cfg.tenantIds,
      },
      { name: 'configured', engine: 'openai', url: configured.url, source: 'config', editable: false, hasApiKey: true, tenantIds: [] },
    );
    assert.equal(cfg.health.status, 'healthy');
    assert.deepEqual(cfg.health.models, ['cfg-model']);
    assert.equal(local.engine, 'local');
    assert.equal(local.source, 'config');
    assert.equal(local.url, undefined);
    assert.notEqual(local.id, cfg.id);

    for (const id of [cfg.id, local.id]) {
      const patched = await call('PATCH', `/nodes/${id}`, { token: platform, json: { name: 'renamed' } });
      assert.equal(patched.status, 409);
      assert.match(patched.body.detail, /configuration/);
      assert.equal((await call('DELETE', `/nodes/${id}`, { token: platform })).status, 409);
    }
    assert.equal((await call('GET', `/nodes/${cfg.id}`, { token: platform })).body.name, 'configured');
  });

  it('creates, reads, updates and deletes a shared node; the router follows each change at once', async () => {
    const created = await call('POST', '/nodes', {
      token: platform,
      json: { name: 'extra', engine: 'openai', url: `${extra.url}/`, apiKey: NODE_KEY },
    });
    assert.equal(created.status, 201, created.text);
    const node = created.body;
    assert.match(node.id, /^node_[0-9A-Z]{26}$/);
    assert.deepEqual(
      {
        url: node.url,
        tenantIds: node.tenantIds,
        enabled: node.enabled,
        hasApiKey: node.hasApiKey,
        source: node.source,
        editable: node.editable,
      },
      { url: extra.url, tenantIds: [], enabled: true, hasApiKey: true, source: 'api', editable: true },
    );
    assert.equal(node.health.status, 'healthy', 'probed before the answer');
    assert.deepEqual(node.health.models, ['extra-model']);
    assert.equal(extra.requests.at(-1)?.headers.authorization, `Bearer ${NODE_KEY}`, 'the key is used upstream');
    const [stored] = await gw.ctx.db.query<{ api_key_encrypted: string | null }>(
      'SELECT api_key_encrypted FROM compute_nodes WHERE id = $1',
      [node.id],
    );
    assert.ok(stored?.api_key_encrypted && !stored.api_key_encrypted.includes(NODE_KEY), 'stored encrypted, never as given');
    assert.ok(
      (await gw.ctx.llm.router.availableModels(tenantB)).some((m) => m.id === 'extra-model'),
      'shared: every tenant',
    );

    assert.deepEqual((await call('GET', `/nodes/${node.id}`, { token: platform })).body, node);
    assert.ok((await call('GET', '/nodes', { token: platform })).body.data.some((n: { id: string }) => n.id === node.id));

    const disabled = await call('PATCH', `/nodes/${node.id}`, { token: platform, json: { enabled: false, name: 'extra (off)' } });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.name, 'extra (off)');
    assert.equal(disabled.body.health.status, 'disabled');
    assert.ok(!(await gw.ctx.llm.router.availableModels(tenantA)).some((m) => m.id === 'extra-model'), 'a disabled node serves nothing');
    await assert.rejects(gw.ctx.llm.router.resolveModel(tenantA, 'extra-model'), (e: { status?: number }) => e.status === 503);

    const enabled = await call('PATCH', `/nodes/${node.id}`, { token: platform, json: { enabled: true, apiKey: null } });
    assert.equal(enabled.body.health.status, 'healthy');
    assert.equal(enabled.body.hasApiKey, false);
    assert.equal(await gw.ctx.llm.router.resolveModel(tenantA, 'extra-model'), 'extra-model');

    assert.equal((await call('DELETE', `/nodes/${node.id}`, { token: platform })).status, 204);
    assert.equal((await call('GET', `/nodes/${node.id}`, { token: platform })).status, 404);
    assert.equal((await call('DELETE', `/nodes/${node.id}`, { token: platform })).status, 404);
    await assert.rejects(gw.ctx.llm.router.resolveModel(tenantA, 'extra-model'), (e: { status?: number }) => e.status === 400);
  });

  it('keeps a tenant admin to their own nodes, and shows shared ones read-only without their address', async () => {
    const own = await call('POST', '/nodes', { token: adminA, json: { name: 'a-own', engine: 'openai', url: extra.url } });
    assert.equal(own.status, 201, own.text);
    assert.deepEqual(own.body.tenantIds, [tenantA]);
    assert.equal(own.body.editable, true);
    const shared = await call('POST', '/nodes', { token: platform, json: { name: 'shared', engine: 'openai', url: configured.url } });
    const forB = await call('POST', '/nodes', {
      token: platform,
      json: { name: 'b-only', engine: 'openai', url: extra.url, tenantIds: [tenantB] },
    });
    assert.equal(forB.status, 201);

    const listA = (await call('GET', '/nodes', { token: adminA })).body.data;
    const ids = listA.map((n: { id: string }) => n.id);
    assert.ok(ids.includes(own.body.id) && ids.includes(shared.body.id));
    assert.ok(!ids.includes(forB.body.id), "another tenant's node is not listed");
    const sharedView = listA.find((n: { id: string }) => n.id === shared.body.id);
    assert.equal(sharedView.url, undefined);
    assert.equal(sharedView.tenantIds, undefined);
    assert.equal(sharedView.editable, false);
    assert.equal(listA.find((n: { source: string }) => n.source === 'config').url, undefined);

    // Tenant admins cannot share a node, or change one they do not own.
    const sharing = await call('POST', '/nodes', {
      token: adminA,
      json: { name: 'x', engine: 'openai', url: extra.url, tenantIds: [tenantA, tenantB] },
    });
    assert.equal(sharing.status, 403);
    assert.equal((await call('PATCH', `/nodes/${own.body.id}`, { token: adminA, json: { tenantIds: [] } })).status, 403);
    assert.equal((await call('PATCH', `/nodes/${shared.body.id}`, { token: adminA, json: { name: 'mine now' } })).status, 403);
    assert.equal((await call('DELETE', `/nodes/${shared.body.id}`, { token: adminA })).status, 403);
    assert.equal(
      (await call('PATCH', `/nodes/${own.body.id}`, { token: adminA, json: { name: 'a-own 2', tenantIds: [tenantA] } })).body.name,
      'a-own 2',
    );

    // Another tenant: 404 for every route, nothing changes.
    for (const [method, json] of [['GET'], ['PATCH', { name: 'pwned' }], ['DELETE']] as const) {
      const response = await call(method, `/nodes/${own.body.id}`, { token: adminB, ...(json ? { json } : {}) });
      assert.equal(response.status, 404, `${method} by tenant B`);
    }
    assert.ok(!(await call('GET', '/nodes', { token: adminB })).body.data.some((n: { id: string }) => n.id === own.body.id));
    assert.equal((await call('GET', `/nodes/${own.body.id}`, { token: adminA })).body.name, 'a-own 2');

    // A platform admin sees and manages all of them.
    assert.equal((await call('GET', `/nodes/${own.body.id}`, { token: platform })).body.url, extra.url);
    for (const id of [own.body.id, shared.body.id, forB.body.id])
      assert.equal((await call('DELETE', `/nodes/${id}`, { token: platform })).status, 204);
  });

  it('needs an administrator: 401 without a valid credential, 403 for members and API keys', async () => {
    const created = await call('POST', '/nodes', { token: adminA, json: { name: 'guarded', engine: 'openai', url: extra.url } });
    const id = created.body.id;
    const routes: [string, string, object?][] = [
      ['GET', '/nodes'],
      ['POST', '/nodes', { name: 'x', engine: 'openai', url: extra.url }],
      ['GET', `/nodes/${id}`],
      ['PATCH', `/nodes/${id}`, { name: 'x' }],
      ['DELETE', `/nodes/${id}`],
    ];
    for (const [method, path, json] of routes) {
      const body = json ? { json } : {};
      assert.equal((await call(method, path, body)).status, 401, `${method} ${path} without credential`);
      assert.equal((await call(method, path, { apiKey: revokedKeyA, ...body })).status, 401, `${method} ${path} revoked key`);
      assert.equal((await call(method, path, { token: memberA, ...body })).status, 403, `${method} ${path} member`);
      assert.equal((await call(method, path, { apiKey: keyA, ...body })).status, 403, `${method} ${path} API key`);
    }
    const still = await call('GET', `/nodes/${id}`, { token: adminA });
    assert.equal(still.body.name, 'guarded');
    assert.equal((await call('DELETE', `/nodes/${id}`, { token: adminA })).status, 204);
  });

  it('rejects malformed input with 400 naming the field, and unknown ids with 404', async () => {
    const base = { name: 'bad', engine: 'openai', url: extra.url };
    const cases: [object, string][] = [
      [{ ...base, url: 'ftp://127.0.0.1/' }, 'url'],
      [{ ...base, url: 'file:///etc/passwd' }, 'url'],
      [{ ...base, url: 'not a url' }, 'url'],
      [{ ...base, url: 'http://169.254.169.254/' }, 'url'],
      [{ ...base, url: 'http://[::ffff:169.254.169.254]/' }, 'url'],
      // IPv4-compatible and NAT64 forms reach the IPv4 address too (node's BlockList alone lets them through).
      [{ ...base, url: 'http://[::169.254.169.254]/' }, 'url'],
      [{ ...base, url: 'http://[64:ff9b::a9fe:a9fe]/' }, 'url'],
      [{ ...base, url: 'http://[fe80::1]:11434' }, 'url'],
      [{ ...base, url: 'http://user:pass@127.0.0.1:1/' }, 'url'],
      [{ ...base, url: `${extra.url}/?key=1` }, 'url'],
      [{ ...base, engine: 'vllm' }, 'engine'],
      [{ ...base, engine: 'local' }, 'engine'],
      [{ ...base, name: '  ' }, 'name'],
      [{ engine: 'openai', url: extra.url }, 'name'],
      [{ ...base, apiKey: '' }, 'apiKey'],
      [{ ...base, enabled: 'yes' }, 'enabled'],
      [{ ...base, tenantIds: ['ten_00000000000000000000000000'] }, 'tenantIds'],
      [{ ...base, tenantIds: 'all' }, 'tenantIds'],
    ];
    for (const [json, field] of cases) {
      const response = await call('POST', '/nodes', { token: platform, json });
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)}: ${response.text}`,
      );
    }
    const node = (await call('POST', '/nodes', { token: platform, json: base })).body;
    const patched = await call('PATCH', `/nodes/${node.id}`, { token: platform, json: { url: 'http://169.254.169.254/latest/meta-data' } });
    assert.equal(patched.status, 400);
    assert.equal(patched.body.errors[0].field, 'url');
    assert.equal((await call('GET', `/nodes/${node.id}`, { token: platform })).body.url, extra.url);
    await call('DELETE', `/nodes/${node.id}`, { token: platform });

    for (const id of ['not-a-node', 'node_00000000000000000000000000', 'node_0000000000ZZZZZZZZZZZZZZZZ']) {
      assert.equal((await call('GET', `/nodes/${id}`, { token: platform })).status, 404, id);
      assert.equal((await call('PATCH', `/nodes/${id}`, { token: platform, json: { name: 'x' } })).status, 404, id);
      assert.equal((await call('DELETE', `/nodes/${id}`, { token: platform })).status, 404, id);
    }
  });

  it("holds a tenant admin's node URLs to the tenant deny list too; a platform admin may use those ranges", async () => {
    for (const url of ['http://10.1.2.3:11434', 'http://[fd12::1]:8000']) {
      const refused = await call('POST', '/nodes', { token: adminA, json: { name: 'internal', engine: 'ollama', url } });
      assert.equal(refused.status, 400, `${url}: ${refused.text}`);
      assert.equal(refused.body.errors[0].field, 'url');
      assert.match(refused.body.detail, /deny list/);
    }
    const own = (await call('POST', '/nodes', { token: adminA, json: { name: 'own', engine: 'openai', url: extra.url } })).body;
    const moved = await call('PATCH', `/nodes/${own.id}`, { token: adminA, json: { url: 'http://10.9.9.9:8000' } });
    assert.equal(moved.status, 400);
    assert.equal((await call('DELETE', `/nodes/${own.id}`, { token: adminA })).status, 204);
    const operator = await call('POST', '/nodes', {
      token: platform,
      json: { name: 'internal', engine: 'ollama', url: 'http://10.1.2.3:11434', enabled: false },
    });
    assert.equal(operator.status, 201, operator.text);
    assert.equal((await call('DELETE', `/nodes/${operator.body.id}`, { token: platform })).status, 204);
  });

  it('records whose deny list a node URL answers to at connect time: the scope of whoever gave the URL', async () => {
    const scopeOf = async (id: string) =>
      (await gw.ctx.db.query<{ url_scope: string }>('SELECT url_scope FROM compute_nodes WHERE id = $1', [id]))[0]?.url_scope;
    const own = (await call('POST', '/nodes', { token: adminA, json: { name: 'scoped', engine: 'openai', url: extra.url } })).body;
    assert.equal(await scopeOf(own.id), 'tenant');
    assert.equal(gw.ctx.llm.nodes.get(own.id)?.definition.urlScope, 'tenant', 'the router holds it to the tenant list');
    await call('PATCH', `/nodes/${own.id}`, { token: platform, json: { name: 'renamed by the operator' } });
    assert.equal(await scopeOf(own.id), 'tenant', 'a change that leaves the URL alone leaves its scope alone');
    await call('PATCH', `/nodes/${own.id}`, { token: platform, json: { url: `${extra.url}/` } });
    assert.equal(await scopeOf(own.id), 'platform', 'the operator re-gave the URL');
    assert.equal(gw.ctx.llm.nodes.get(own.id)?.definition.urlScope, 'platform');
    await call('PATCH', `/nodes/${own.id}`, { token: adminA, json: { url: extra.url } });
    assert.equal(await scopeOf(own.id), 'tenant');
    const shared = (await call('POST', '/nodes', { token: platform, json: { name: 'op', engine: 'openai', url: extra.url } })).body;
    assert.equal(await scopeOf(shared.id), 'platform');
    for (const id of [own.id, shared.id]) assert.equal((await call('DELETE', `/nodes/${id}`, { token: platform })).status, 204);
  });

  it('upgrading, existing nodes keep the platform scope only where a platform admin gave the URL and no tenant admin can have changed it', async () => {
    const migration = readFileSync(new URL('../../migrations/0004_compute_node_url_scope.sql', import.meta.url), 'utf8');
    const backfill = migration.slice(migration.indexOf('UPDATE compute_nodes'));
    const p = (await gw.ctx.db.query<{ id: string }>("SELECT id FROM users WHERE 'platform_admin' = ANY (roles) LIMIT 1"))[0]!.id;
    const rows = [
      { name: 'op-shared', tenants: [], by: p, touched: true, expected: 'platform' },
      { name: 'op-two-tenants', tenants: [tenantA, tenantB], by: p, touched: true, expected: 'platform' },
      { name: 'op-one-tenant-untouched', tenants: [tenantA], by: p, touched: false, expected: 'platform' },
      { name: 'op-one-tenant-changed', tenants: [tenantA], by: p, touched: true, expected: 'tenant' },
      { name: 'tenant-admin', tenants: [tenantA], by: 'usr_not_a_platform_admin', touched: false, expected: 'tenant' },
      { name: 'unknown-creator', tenants: [], by: null, touched: false, expected: 'tenant' },
    ];
    const ids: string[] = [];
    for (const row of rows) {
      const [inserted] = await gw.ctx.db.query<{ id: string }>(
        `INSERT INTO compute_nodes (id, name, engine, url, tenant_ids, enabled, created_by, url_scope, updated_at)
         VALUES ('node_' || upper(substr(md5($1), 1, 26)), $1, 'openai', 'http://10.0.0.1:1', $2, false, $3, 'tenant', now() + make_interval(secs => $4)) RETURNING id`,
        [`backfill ${row.name}`, row.tenants, row.by, row.touched ? 5 : 0],
      );
      ids.push(inserted!.id);
    }
    // The migration's statement, held to these rows.
    await gw.ctx.db.query(backfill.replace(/;\s*$/, ' AND id = ANY ($1)'), [ids]);
    const scopes = await gw.ctx.db.query<{ name: string; url_scope: string }>(
      'SELECT name, url_scope FROM compute_nodes WHERE id = ANY ($1)',
      [ids],
    );
    assert.deepEqual(
      Object.fromEntries(scopes.map((r) => [r.name.replace('backfill ', ''), r.url_scope])),
      Object.fromEntries(rows.map((r) => [r.name, r.expected])),
    );
    await gw.ctx.db.query('DELETE FROM compute_nodes WHERE id = ANY ($1)', [ids]);
  });

  it('holds model downloads into the local engine to the same deny list', async () => {
    const lease = await gw.ctx.llm.router.pullTarget(tenantA, 'local');
    try {
      for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[::ffff:a9fe:a9fe]/x.gguf']) {
        const frames = lease.engine.pull({ model: 'meta.gguf', url, signal: AbortSignal.timeout(5000) });
        await assert.rejects(async () => {
          for await (const frame of frames) assert.notEqual(frame.status, 'success');
        }, /deny list/);
      }
    } finally {
      lease.release('ok');
    }
  });

  it('never returns or logs a node API key', () => {
    for (const secret of [NODE_KEY, 'sk-config-secret-0b1c']) {
      assert.ok(!texts.some((t) => t.includes(secret)), 'in a response');
      assert.ok(!gw.logs().includes(secret), 'in the log');
    }
    assert.ok(texts.length > 50);
  });
});
