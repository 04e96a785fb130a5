import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, seedUser, type TestGateway, tokenFor } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';

describe('auth tenants', () => {
  let gw: TestGateway;
  let platformTenant: string;
  let platformAdmin: string;
  let tenantA: string;
  let adminA: string;
  let memberA: string;
  let tenantB: string;
  let adminB: string;
  let apiKeyA: string;

  before(async () => {
    gw = await startGateway();
    const world = await seedWorld(gw, 'ten');
    platformTenant = world.platform.tenantId;
    tenantA = world.a.tenantId;
    tenantB = world.b.tenantId;
    platformAdmin = world.platform.admin.token;
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    memberA = world.a.member.token;
    apiKeyA = world.a.key.key;
  });
  after(() => gw.close());

  const tenantPath = (id: string) => `/api/auth/tenants/${id}`;
  const listNames = async () =>
    (await gw.request('GET', '/api/auth/tenants', { token: platformAdmin })).body.data.map((t: { name: string }) => t.name);

  it('lets a platform admin create and list tenants', async () => {
    const created = await gw.request('POST', '/api/auth/tenants', { token: platformAdmin, json: { name: 'Globex' } });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'id', 'limits', 'name', 'settings', 'status', 'updatedAt']);
    assert.deepEqual(created.body.settings, {
      defaultModel: null,
      allowedModels: null,
      streamMetadataFrame: 'spec',
      streamMetadataChoices: false,
      mcp: { memberAllow: [] },
    });
    assert.match(created.body.id, /^ten_[0-9A-Z]{26}$/);
    assert.equal(created.body.name, 'Globex');
    assert.equal(created.body.status, 'active');
    assert.ok(!Number.isNaN(Date.parse(created.body.createdAt)));

    const list = await gw.request('GET', '/api/auth/tenants', { token: platformAdmin });
    assert.equal(list.status, 200);
    const ids = list.body.data.map((t: { id: string }) => t.id);
    for (const id of [created.body.id, platformTenant, tenantA, tenantB]) assert.ok(ids.includes(id));
    assert.deepEqual(
      list.body.data.find((t: { id: string }) => t.id === created.body.id),
      created.body,
    );

    // Names are unique regardless of case and surrounding white space.
    for (const name of ['Globex', 'GLOBEX', '  globex ']) {
      const duplicate = await gw.request('POST', '/api/auth/tenants', { token: platformAdmin, json: { name } });
      assert.equal(duplicate.status, 409, name);
      assert.equal(duplicate.body.code, 'CONFLICT');
    }
  });

  // Regression: pg-pool drops a connection after any failed query and dials again at
  // once; the embedded database accepted one connection only and reset the new one
  // while the old was still closing, so the request after a 409 often failed with 500.
  it('answers every request after a conflict normally', async () => {
    for (let i = 0; i < 20; i++) {
      assert.equal(
        (await gw.request('POST', '/api/auth/tenants', { token: platformAdmin, json: { name: 'Globex' } })).status,
        409,
        `conflict ${i}`,
      );
      assert.equal((await gw.request('GET', tenantPath(tenantB), { token: platformAdmin })).status, 200, `request after conflict ${i}`);
    }
  });

  it('keeps tenant creation and listing to platform admins', async () => {
    const before = await listNames();
    assert.equal((await gw.request('POST', '/api/auth/tenants', { json: { name: 'Anon' } })).status, 401);
    assert.equal((await gw.request('GET', '/api/auth/tenants')).status, 401);
    for (const [who, credential] of [
      ['tenant admin', { token: adminA }],
      ['member', { token: memberA }],
      ['API key', { apiKey: apiKeyA }],
    ] as const) {
      assert.equal((await gw.request('POST', '/api/auth/tenants', { ...credential, json: { name: `By ${who}` } })).status, 403, who);
      assert.equal((await gw.request('GET', '/api/auth/tenants', credential)).status, 403, who);
    }
    assert.deepEqual(await listNames(), before);
  });

  it('shows a tenant to platform admins and to its own admin only', async () => {
    const byPlatform = await gw.request('GET', tenantPath(tenantA), { token: platformAdmin });
    assert.equal(byPlatform.status, 200);
    assert.equal(byPlatform.body.id, tenantA);
    const byOwnAdmin = await gw.request('GET', tenantPath(tenantA), { token: adminA });
    assert.deepEqual(byOwnAdmin.body, byPlatform.body);
    assert.equal((await gw.request('GET', tenantPath(tenantA), { token: adminB })).status, 404);
    assert.equal((await gw.request('GET', tenantPath(tenantA), { token: memberA })).status, 403);
    assert.equal((await gw.request('GET', tenantPath(tenantA), { apiKey: apiKeyA })).status, 403);
    assert.equal((await gw.request('GET', tenantPath('ten_00000000000000000000000000'), { token: platformAdmin })).status, 404);
    assert.equal((await gw.request('GET', tenantPath('not-a-tenant'), { token: platformAdmin })).status, 404);
  });

  it('lets a tenant admin rename their tenant, and only a platform admin change its status', async () => {
    const before = (await gw.request('GET', tenantPath(tenantA), { token: adminA })).body;
    const renamed = await gw.request('PATCH', tenantPath(tenantA), { token: adminA, json: { name: 'Acme Renamed' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Acme Renamed');
    assert.ok(Date.parse(renamed.body.updatedAt) >= Date.parse(before.updatedAt));

    const statusByAdmin = await gw.request('PATCH', tenantPath(tenantA), { token: adminA, json: { status: 'disabled' } });
    assert.equal(statusByAdmin.status, 403);
    assert.equal((await gw.request('PATCH', tenantPath(tenantA), { token: memberA, json: { name: 'By member' } })).status, 403);
    assert.equal((await gw.request('GET', tenantPath(tenantA), { token: adminA })).body.status, 'active');

    // Another tenant's admin: not found, nothing changes.
    for (const json of [{ name: 'pwned' }, { status: 'disabled' }]) {
      assert.equal((await gw.request('PATCH', tenantPath(tenantA), { token: adminB, json })).status, 404);
    }
    const after = (await gw.request('GET', tenantPath(tenantA), { token: platformAdmin })).body;
    assert.equal(after.name, 'Acme Renamed');
    assert.equal(after.status, 'active');

    const taken = await gw.request('PATCH', tenantPath(tenantA), { token: adminA, json: { name: 'globex' } });
    assert.equal(taken.status, 409);

    const unchanged = await gw.request('PATCH', tenantPath(tenantA), { token: adminA, json: {} });
    assert.equal(unchanged.status, 200);
    assert.deepEqual(unchanged.body, after);
  });

  it('does not let a platform admin disable their own tenant', async () => {
    const response = await gw.request('PATCH', tenantPath(platformTenant), { token: platformAdmin, json: { status: 'disabled' } });
    assert.equal(response.status, 409);
    assert.equal((await gw.request('GET', tenantPath(platformTenant), { token: platformAdmin })).body.status, 'active');
    // Renaming it is fine.
    assert.equal(
      (await gw.request('PATCH', tenantPath(platformTenant), { token: platformAdmin, json: { name: 'Platform HQ' } })).status,
      200,
    );
  });

  it('cuts off a disabled tenant’s keys and sessions at once, and restores them on enable', async () => {
    const c = await seedTenant(gw, 'ten-c');
    const adminC = await tokenFor(gw, c.admin.id, c.tenantId);
    const memberC = await tokenFor(gw, (await seedUser(gw, c.tenantId)).id, c.tenantId);
    const keyC = (await gw.request('POST', `/api/auth/tenants/${c.tenantId}/api-keys`, { token: adminC, json: { name: 'c' } })).body.key;
    const works = async () => [
      (await gw.request('GET', '/api/os/workspaces', { apiKey: keyC })).status,
      (await gw.request('GET', '/api/os/workspaces', { token: adminC })).status,
      (await gw.request('GET', '/api/os/workspaces', { token: memberC })).status,
    ];
    assert.deepEqual(await works(), [200, 200, 200]); // every credential now cached

    const disabled = await gw.request('PATCH', tenantPath(c.tenantId), { token: platformAdmin, json: { status: 'disabled' } });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.status, 'disabled');
    assert.deepEqual(await works(), [401, 401, 401]);
    // Other tenants are untouched; the platform admin still sees the disabled tenant.
    assert.equal((await gw.request('GET', '/api/os/workspaces', { apiKey: apiKeyA })).status, 200);
    assert.equal((await gw.request('GET', tenantPath(c.tenantId), { token: platformAdmin })).body.status, 'disabled');

    const enabled = await gw.request('PATCH', tenantPath(c.tenantId), { token: platformAdmin, json: { status: 'active' } });
    assert.equal(enabled.body.status, 'active');
    assert.deepEqual(await works(), [200, 200, 200]);
  });

  it('lets a tenant admin set the llm settings, and nobody else but a platform admin', async () => {
    const path = tenantPath(tenantB);
    const set = await gw.request('PATCH', path, {
      token: adminB,
      json: { defaultModel: 'llama-3', allowedModels: ['llama-3', 'qwen'], streamMetadataChoices: true },
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.settings, {
      defaultModel: 'llama-3',
      allowedModels: ['llama-3', 'qwen'],
      streamMetadataFrame: 'empty_choices',
      streamMetadataChoices: true,
      mcp: { memberAllow: [] },
    });
    assert.deepEqual((await gw.request('GET', path, { token: platformAdmin })).body.settings, set.body.settings);
    assert.deepEqual(await gw.ctx.llm.router.settings(tenantB), set.body.settings, 'the router sees the change at once');

    // Fields left out stay as they are; null clears.
    const partial = await gw.request('PATCH', path, { token: adminB, json: { allowedModels: null } });
    assert.deepEqual(partial.body.settings, {
      defaultModel: 'llama-3',
      allowedModels: null,
      streamMetadataFrame: 'empty_choices',
      streamMetadataChoices: true,
      mcp: { memberAllow: [] },
    });
    const byPlatform = await gw.request('PATCH', path, {
      token: platformAdmin,
      json: { defaultModel: null, streamMetadataChoices: false },
    });
    assert.equal(byPlatform.status, 200);
    assert.deepEqual(byPlatform.body.settings, {
      defaultModel: null,
      allowedModels: null,
      streamMetadataFrame: 'spec',
      streamMetadataChoices: false,
      mcp: { memberAllow: [] },
    });
    assert.deepEqual(await gw.ctx.llm.router.settings(tenantB), byPlatform.body.settings);

    assert.equal((await gw.request('PATCH', path, { token: adminA, json: { defaultModel: 'x' } })).status, 404);
    assert.equal((await gw.request('PATCH', tenantPath(tenantA), { token: memberA, json: { defaultModel: 'x' } })).status, 403);
    assert.equal((await gw.request('PATCH', tenantPath(tenantA), { apiKey: apiKeyA, json: { allowedModels: [] } })).status, 403);
    assert.deepEqual((await gw.request('GET', path, { token: platformAdmin })).body.settings, byPlatform.body.settings);
  });

  it('keeps streamMetadataFrame and its alias streamMetadataChoices coherent, the frame winning when both are sent', async () => {
    const path = tenantPath(tenantB);
    const patch = async (json: object) => {
      const response = await gw.request('PATCH', path, { token: adminB, json });
      assert.equal(response.status, 200, response.text);
      const { streamMetadataFrame, streamMetadataChoices } = response.body.settings;
      assert.deepEqual(await gw.ctx.llm.router.settings(tenantB), response.body.settings);
      return [streamMetadataFrame, streamMetadataChoices];
    };
    assert.deepEqual(await patch({ streamMetadataFrame: 'chunk' }), ['chunk', false]);
    assert.deepEqual(await patch({ defaultModel: null }), ['chunk', false], 'left out: unchanged');
    assert.deepEqual(await patch({ streamMetadataChoices: true }), ['empty_choices', true]);
    assert.deepEqual(await patch({ streamMetadataFrame: 'spec' }), ['spec', false]);
    assert.deepEqual(await patch({ streamMetadataFrame: 'empty_choices' }), ['empty_choices', true]);
    assert.deepEqual(await patch({ streamMetadataChoices: false }), ['spec', false]);
    assert.deepEqual(await patch({ streamMetadataFrame: 'chunk', streamMetadataChoices: true }), ['chunk', false]);
    // A record as GET shows it, sent back whole, changes nothing.
    const current = (await gw.request('GET', path, { token: adminB })).body.settings;
    assert.deepEqual(await patch(current), ['chunk', false]);
    assert.deepEqual(await patch({ streamMetadataFrame: 'spec' }), ['spec', false]);
  });

  it('rejects malformed llm settings with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ defaultModel: '' }, 'defaultModel'],
      [{ defaultModel: 'x'.repeat(201) }, 'defaultModel'],
      [{ defaultModel: 7 }, 'defaultModel'],
      [{ allowedModels: 'llama' }, 'allowedModels'],
      [{ allowedModels: ['a', 'a'] }, 'allowedModels'],
      [{ allowedModels: ['ok', ''] }, 'allowedModels[1]'],
      [{ allowedModels: [42] }, 'allowedModels[0]'],
      [{ allowedModels: Array.from({ length: 501 }, (_, i) => `m${i}`) }, 'allowedModels'],
      [{ streamMetadataChoices: 'yes' }, 'streamMetadataChoices'],
      [{ streamMetadataFrame: 'choices' }, 'streamMetadataFrame'],
      [{ streamMetadataFrame: true }, 'streamMetadataFrame'],
      [{ streamMetadataFrame: null }, 'streamMetadataFrame'],
      [{ defaultModel: 'c', allowedModels: ['a', 'b'] }, 'defaultModel'],
    ];
    for (const [json, field] of cases) {
      const response = await gw.request('PATCH', tenantPath(tenantB), { token: adminB, json });
      assert.equal(response.status, 400, JSON.stringify(json).slice(0, 80));
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        response.text.slice(0, 300),
      );
    }
    // An allow list that drops the current default is refused too.
    assert.equal((await gw.request('PATCH', tenantPath(tenantB), { token: adminB, json: { defaultModel: 'a' } })).status, 200);
    const dropping = await gw.request('PATCH', tenantPath(tenantB), { token: adminB, json: { allowedModels: ['b'] } });
    assert.equal(dropping.status, 400);
    assert.equal(dropping.body.errors[0].field, 'allowedModels');
    const allowed = Array.from({ length: 500 }, (_, i) => `m${i}`).concat();
    allowed[0] = 'a';
    assert.equal((await gw.request('PATCH', tenantPath(tenantB), { token: adminB, json: { allowedModels: allowed } })).status, 200);
    assert.equal(
      (await gw.request('PATCH', tenantPath(tenantB), { token: adminB, json: { defaultModel: null, allowedModels: null } })).status,
      200,
    );
  });

  it('rejects malformed input with 400 naming the field', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/auth/tenants', {}, 'name'],
      ['POST', '/api/auth/tenants', { name: 123 }, 'name'],
      ['POST', '/api/auth/tenants', { name: '  ' }, 'name'],
      ['POST', '/api/auth/tenants', { name: 'x'.repeat(201) }, 'name'],
      ['PATCH', tenantPath(tenantB), { name: '' }, 'name'],
      ['PATCH', tenantPath(tenantB), { status: 'paused' }, 'status'],
      ['PATCH', tenantPath(tenantB), { status: true }, 'status'],
    ];
    for (const [method, path, json, field] of cases) {
      const response = await gw.request(method, path, { token: platformAdmin, json });
      assert.equal(response.status, 400, `${method} ${JSON.stringify(json)}`);
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        response.text,
      );
    }
    const b = (await gw.request('GET', tenantPath(tenantB), { token: platformAdmin })).body;
    assert.equal(b.status, 'active');
    assert.match(b.name, /^Tenant /);
  });
});
