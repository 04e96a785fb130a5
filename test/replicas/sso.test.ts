// Issue 30, OIDC on two replica processes sharing one PostgreSQL (and Redis), behind one
// public URL (GATEWAY_PUBLIC_URL, as a balancer would have it): a sign-in started on one
// replica completes on the other, and a transaction spent on one replica cannot be
// replayed on the other. The IdP is oidc-provider over HTTPS, trusted by both replicas
// through NODE_EXTRA_CA_CERTS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { seedTenant, tokenFor } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { startReplicaSet, type GatewayProcess, type ReplicaSet } from '../helpers/replica-process.js';
import { browse, CookieJar, makeCa, startIdp, type TestCa, type TestIdp } from '../auth/sso-support.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const PUBLIC_URL = 'https://gateway.replicas.test';

describe('SSO sign-in on two replica processes', { skip }, () => {
  let dir: string;
  let ca: TestCa;
  let idp: TestIdp;
  let set: ReplicaSet;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let connectionId: string;

  /** /start on `replica`, then the IdP's round trip: the callback's path and query, and the transaction cookie. */
  async function authorize(replica: GatewayProcess) {
    const start = await fetch(`${replica.url}/api/auth/sso/${connectionId}/start`, { redirect: 'manual' });
    assert.equal(start.status, 302, await start.text());
    const transaction = start.headers
      .getSetCookie()
      .find((c) => c.startsWith('gateway_sso_transaction='))!
      .split(';')[0]!;
    const jar = new CookieJar();
    let location = new URL(start.headers.get('location')!);
    for (let hop = 0; hop < 8 && location.origin !== PUBLIC_URL; hop++) {
      const response = await browse(jar, location, ca);
      location = new URL(response.headers.get('location')!, location);
    }
    assert.equal(location.origin, PUBLIC_URL, 'the IdP sends the browser to the public URL');
    return { callback: location.pathname + location.search, transaction };
  }

  async function deliver(replica: GatewayProcess, flow: { callback: string; transaction: string }) {
    const response = await fetch(replica.url + flow.callback, { redirect: 'manual', headers: { cookie: flow.transaction } });
    assert.equal(response.status, 302);
    const signedIn = response.headers.getSetCookie().some((c) => c.startsWith('service_refresh_token=') && !/=;/.test(c));
    return { location: response.headers.get('location'), signedIn };
  }

  before(async () => {
    dir = mkdtempSync(path.join(TEST_TMP, 'sso-replicas-'));
    ca = await makeCa(dir);
    idp = await startIdp(ca);
    idp.users.set('rita', { email: 'rita@replicas.example', email_verified: true });
    idp.loginAs = 'rita';
    set = await startReplicaSet({
      REDIS_URL: process.env.TEST_REDIS_URL!,
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_PUBLIC_URL: PUBLIC_URL,
      NODE_EXTRA_CA_CERTS: ca.file,
    });
    [a, b] = await Promise.all([set.start(), set.start()]);
    const seeded = await seedTenant(set, 'sso-replicas', ['admin', 'platform_admin']);
    const token = await tokenFor(set, seeded.admin.id, seeded.tenantId);
    const created = await a.request('POST', `/api/auth/tenants/${seeded.tenantId}/sso/connections`, {
      token,
      json: { name: 'Replicas IdP', issuer: idp.issuer, clientId: 'replicas', clientSecret: 'replicas-secret', jit: true },
    });
    assert.equal(created.status, 201, created.text);
    connectionId = created.body.id;
    assert.equal(created.body.redirectUri, `${PUBLIC_URL}/api/auth/sso/callback/${connectionId}`);
    idp.serve([{ client_id: 'replicas', client_secret: 'replicas-secret', redirect_uris: [created.body.redirectUri] }]);
  });
  after(async () => {
    await set?.close();
    await idp?.close();
    ca?.agent.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('completes on replica B a sign-in started on replica A', async () => {
    const flow = await authorize(a);
    const done = await deliver(b, flow);
    assert.equal(done.location, `${PUBLIC_URL}/`);
    assert.ok(done.signedIn);
  });

  it('refuses on replica B a transaction spent on replica A, and the other way round', async () => {
    const first = await authorize(a);
    assert.ok((await deliver(a, first)).signedIn);
    const replayed = await deliver(b, first);
    assert.equal(replayed.location, `${PUBLIC_URL}/#ssoError=transaction`);
    assert.equal(replayed.signedIn, false);

    const second = await authorize(b);
    assert.ok((await deliver(b, second)).signedIn);
    const back = await deliver(a, second);
    assert.equal(back.location, `${PUBLIC_URL}/#ssoError=transaction`);
    assert.equal(back.signedIn, false);
  });
});
