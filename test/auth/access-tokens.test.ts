// Access tokens are EdDSA JWTs with the algorithm pinned and iss, aud, exp, typ and
// the tenant claim all checked. Every forged or stale variant gets the same 401.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair } from 'jose';
import { startGateway, seedTenant, type TestGateway, withoutCorrelation } from '../helpers/gateway.js';
import { ACCESS_TOKEN_TYPE, AUDIENCE } from '../../src/areas/auth/sessions/access-tokens.js';

describe('access tokens', () => {
  let gw: TestGateway;
  let userId: string;
  let tenantId: string;
  let otherTenantId: string;

  // A token shaped exactly like ours, with one thing changed by `tweak`.
  async function token(tweak: { alg?: string; key?: unknown; iss?: string; aud?: string; typ?: string; exp?: number; tid?: string } = {}) {
    const alg = tweak.alg ?? 'EdDSA';
    return new SignJWT({ tid: tweak.tid ?? tenantId })
      .setProtectedHeader({ alg, typ: tweak.typ ?? ACCESS_TOKEN_TYPE })
      .setSubject(userId)
      .setIssuer(tweak.iss ?? gw.ctx.config.auth.issuer)
      .setAudience(tweak.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(tweak.exp ?? Math.floor(Date.now() / 1000) + 600)
      .sign((tweak.key ?? gw.ctx.secrets.jwt.privateKey) as Parameters<SignJWT['sign']>[0]);
  }

  before(async () => {
    gw = await startGateway();
    const a = await seedTenant(gw, 'tok');
    const b = await seedTenant(gw, 'other');
    userId = a.admin.id;
    tenantId = a.tenantId;
    otherTenantId = b.tenantId;
  });
  after(() => gw.close());

  it('accepts a genuine token', async () => {
    const response = await gw.request('GET', '/api/auth/me', { token: await token() });
    assert.equal(response.status, 200);
    assert.equal(response.body.id, userId);
  });

  it("does no database work at the edge once the token and the user's account state are cached", async () => {
    const genuine = await token();
    assert.equal((await gw.request('GET', '/api/os/workspaces', { token: genuine })).status, 200); // warms both caches
    const before = gw.ctx.db.stats.queries;
    const rounds = 10;
    for (let i = 0; i < rounds; i++) assert.equal((await gw.request('GET', '/api/os/workspaces', { token: genuine })).status, 200);
    assert.equal(gw.ctx.db.stats.queries - before, rounds, 'one query per request: the list itself');
  });

  it('rejects every forged, foreign or stale variant with the same 401', async () => {
    const foreign = await generateKeyPair('EdDSA');
    const header = (h: object) => Buffer.from(JSON.stringify(h)).toString('base64url');
    const genuine = await token();
    const [, payload] = genuine.split('.');
    const tamperedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), tid: otherTenantId }),
    ).toString('base64url');
    const variants: Record<string, string> = {
      'alg none': `${header({ alg: 'none', typ: ACCESS_TOKEN_TYPE })}.${payload}.`,
      'HS256 with a guessable key': await token({ alg: 'HS256', key: new TextEncoder().encode('secret'.repeat(6)) }),
      'signed by another key': await token({ key: foreign.privateKey }),
      'wrong issuer': await token({ iss: 'someone-else' }),
      'wrong audience': await token({ aud: 'another-api' }),
      'wrong typ': await token({ typ: 'JWT' }),
      expired: await token({ exp: Math.floor(Date.now() / 1000) - 5 }),
      'tenant claim of another tenant (validly signed)': await token({ tid: otherTenantId }),
      'payload tampered after signing': genuine
        .split('.')
        .map((part, i) => (i === 1 ? tamperedPayload : part))
        .join('.'),
      'not a JWT': 'abc.def',
    };
    const none = await gw.request('GET', '/api/auth/me');
    assert.equal(none.status, 401);
    for (const [name, forged] of Object.entries(variants)) {
      const response = await gw.request('GET', '/api/auth/me', { token: forged });
      assert.equal(response.status, 401, name);
      assert.deepEqual(withoutCorrelation(response.body), withoutCorrelation(none.body), name);
    }
  });
});
