// First start on an empty database creates the first tenant and its
// administrator from the environment, once; a later start never changes them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { startServer } from '../../src/server/start.js';
import { lockHolder } from '../../src/platform/db/embedded.js';
import { dataDirsForSuite, request, startInProcess } from '../cli/helpers.js';

const FIRST = {
  GATEWAY_TENANT: 'First Tenant',
  GATEWAY_ADMIN_USERNAME: 'founder',
  GATEWAY_ADMIN_PASSWORD: 'founder-password-1',
  GATEWAY_ADMIN_EMAIL: 'founder@example.com',
};

describe('bootstrap of the first tenant and administrator', () => {
  const fresh = dataDirsForSuite();

  it('creates them once; a later start with other values changes nothing', async () => {
    const data = await fresh();
    const first = await startInProcess({ ...data.env, GATEWAY_TLS: 'off', ...FIRST });
    let tenantId: string;
    let adminId: string;
    try {
      const boot = first.server.bootstrap;
      assert.equal(boot.outcome, 'created');
      if (boot.outcome !== 'created') return;
      tenantId = boot.tenant.id;
      adminId = boot.admin.id;
      assert.equal(boot.tenant.name, 'First Tenant');
      assert.deepEqual(boot.admin.roles, ['platform_admin', 'admin']);
      assert.equal(boot.admin.email, 'founder@example.com');
      const banner = first.printed.join('\n');
      assert.match(banner, /Created the first tenant "First Tenant"/);
      assert.equal(banner.includes(FIRST.GATEWAY_ADMIN_PASSWORD), false, 'the banner never shows the password');

      const login = await request(`${first.server.url}/api/auth/login`, {
        method: 'POST',
        json: { username: 'founder', password: FIRST.GATEWAY_ADMIN_PASSWORD },
      });
      assert.equal(login.status, 200, login.text);
      assert.deepEqual(login.body.user.roles.sort(), ['admin', 'platform_admin']);
      assert.equal(first.logs().includes(FIRST.GATEWAY_ADMIN_PASSWORD), false);
    } finally {
      await first.server.close();
    }

    const second = await startInProcess({
      ...data.env,
      GATEWAY_TLS: 'off',
      GATEWAY_TENANT: 'Another Tenant',
      GATEWAY_ADMIN_USERNAME: 'founder',
      GATEWAY_ADMIN_PASSWORD: 'a-different-password-2',
    });
    try {
      const boot = second.server.bootstrap;
      assert.equal(boot.outcome, 'existing');
      if (boot.outcome === 'existing')
        assert.deepEqual(boot.ignoredVariables, ['GATEWAY_TENANT', 'GATEWAY_ADMIN_USERNAME', 'GATEWAY_ADMIN_PASSWORD']);
      assert.match(second.printed.join('\n'), /GATEWAY_TENANT, GATEWAY_ADMIN_USERNAME, GATEWAY_ADMIN_PASSWORD ignored/);
      const tenants = await second.server.ctx.db.query<{ id: string; name: string }>('SELECT id, name FROM tenants');
      assert.deepEqual(tenants, [{ id: tenantId!, name: 'First Tenant' }]);
      const users = await second.server.ctx.db.query<{ id: string }>('SELECT id FROM users');
      assert.deepEqual(users, [{ id: adminId! }]);

      const url = `${second.server.url}/api/auth/login`;
      assert.equal((await request(url, { method: 'POST', json: { username: 'founder', password: 'a-different-password-2' } })).status, 401);
      assert.equal(
        (await request(url, { method: 'POST', json: { username: 'founder', password: FIRST.GATEWAY_ADMIN_PASSWORD } })).status,
        200,
      );
    } finally {
      await second.server.close();
    }
  });

  it('a partial set of variables stops the first start, naming the missing one, and creates nothing', async () => {
    const data = await fresh();
    const partial = { GATEWAY_TENANT: 'Half', GATEWAY_ADMIN_USERNAME: 'half-admin' };
    const config = loadConfig({ ...data.env, GATEWAY_TLS: 'off', PORT: '0', ...partial });
    await assert.rejects(startServer(config, { print: () => {} }), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.variable, 'GATEWAY_ADMIN_PASSWORD');
      assert.match(error.message, /GATEWAY_ADMIN_PASSWORD is required to create the first tenant/);
      return true;
    });
    assert.equal(lockHolder(data.dir), undefined, 'a failed start releases the data dir');

    // A value the user service rejects is named by its variable, and the transaction leaves nothing behind.
    const weak = loadConfig({ ...data.env, GATEWAY_TLS: 'off', PORT: '0', ...partial, GATEWAY_ADMIN_PASSWORD: 'short' });
    await assert.rejects(startServer(weak, { print: () => {} }), /GATEWAY_ADMIN_PASSWORD must be 12 to 256 characters/);

    const empty = await startInProcess({ ...data.env, GATEWAY_TLS: 'off' });
    try {
      assert.equal(empty.server.bootstrap.outcome, 'empty');
      assert.deepEqual(await empty.server.ctx.db.query('SELECT id FROM tenants'), []);
      const banner = empty.printed.join('\n');
      assert.match(banner, /No tenant exists yet/);
      assert.match(banner, /tenants create --name/);
      assert.match(banner, /users create --tenant <tenantId>/);
      assert.match(banner, /GATEWAY_TENANT, GATEWAY_ADMIN_USERNAME and GATEWAY_ADMIN_PASSWORD/);
      // Issue 26: the banner said nothing about models; with none, it names the two ways to get one.
      await empty.server.ctx.llm.nodes.ready;
      const notice = empty.printed.join('\n');
      assert.match(notice, /No models yet/);
      assert.match(notice, /gateway models pull <name> --url/);
      assert.match(notice, /POST \/api\/llm\/v1\/nodes/);
      assert.match(notice, /README\.md#models/);
    } finally {
      await empty.server.close();
    }
  });
});
