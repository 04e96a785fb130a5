// The internal token is the services' only proof of identity: anything but an
// untouched, unexpired token signed with the edge's key must be rejected.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { INTERNAL_TOKEN_TTL_SECONDS, mintInternalToken, verifyInternalToken } from '../../src/platform/internal-token.js';
import type { Principal } from '../../src/platform/identity.js';

const key = randomBytes(32);
const now = Date.UTC(2025, 0, 1, 12, 0, 0);
const principal: Principal = { tenantId: 'ten_A', kind: 'apiKey', subject: 'key_1', roles: [], scopes: ['llm:read'], customerId: 'cus_9' };

function resign(payload: string, signingKey = key): string {
  return `v1.${payload}.${createHmac('sha256', signingKey).update(payload).digest('base64url')}`;
}
const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
const encode = (claims: unknown) => Buffer.from(JSON.stringify(claims)).toString('base64url');

describe('internal token', () => {
  it('round-trips the principal and the correlation id', () => {
    const token = mintInternalToken(key, principal, 'corr-1', now);
    assert.deepEqual(verifyInternalToken(key, token, now), { principal, correlationId: 'corr-1' });
    const user: Principal = { tenantId: 'ten_B', kind: 'user', subject: 'usr_1', roles: ['admin'], scopes: [] };
    assert.deepEqual(verifyInternalToken(key, mintInternalToken(key, user, 'c', now), now)?.principal, user);
  });

  it('is valid for its TTL and not a millisecond longer', () => {
    const token = mintInternalToken(key, principal, 'c', now);
    assert.ok(verifyInternalToken(key, token, now + INTERNAL_TOKEN_TTL_SECONDS * 1000 - 1));
    assert.equal(verifyInternalToken(key, token, now + INTERNAL_TOKEN_TTL_SECONDS * 1000), undefined);
    assert.equal(verifyInternalToken(key, token, now + 3_600_000), undefined);
  });

  it('rejects a token signed with another key', () => {
    const token = mintInternalToken(randomBytes(32), principal, 'c', now);
    assert.equal(verifyInternalToken(key, token, now), undefined);
  });

  it('rejects a tampered payload (another tenant, more roles, later expiry)', () => {
    const token = mintInternalToken(key, principal, 'c', now);
    const [, , signature] = token.split('.');
    for (const change of [{ tid: 'ten_EVIL' }, { rol: ['platform_admin'] }, { exp: payloadOf(token).exp + 3600 }]) {
      const forged = `v1.${encode({ ...payloadOf(token), ...change })}.${signature}`;
      assert.equal(verifyInternalToken(key, forged, now), undefined, JSON.stringify(change));
    }
  });

  it('rejects a tampered signature and a changed version', () => {
    const token = mintInternalToken(key, principal, 'c', now);
    const [version, payload, signature] = token.split('.') as [string, string, string];
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    assert.equal(verifyInternalToken(key, `${version}.${payload}.${flipped}`, now), undefined);
    assert.equal(verifyInternalToken(key, `${version}.${payload}.${signature.slice(0, -2)}`, now), undefined);
    assert.equal(verifyInternalToken(key, `v2.${payload}.${signature}`, now), undefined);
  });

  it('rejects malformed tokens without throwing', () => {
    const token = mintInternalToken(key, principal, 'c', now);
    for (const bad of ['', 'v1', 'v1.', 'v1..', 'v1.x', '...', 'garbage', `${token}.extra`, `${token}.`, `x.${token}`]) {
      assert.equal(verifyInternalToken(key, bad, now), undefined, JSON.stringify(bad));
    }
  });

  it('rejects a correctly signed token whose payload is not a complete claim set', () => {
    // Only the key holder can produce these, but a verifier must never throw or accept them.
    for (const payload of [
      Buffer.from('not json').toString('base64url'),
      encode(null),
      encode([]),
      encode({ ...payloadOf(mintInternalToken(key, principal, 'c', now)), exp: undefined }),
    ]) {
      assert.doesNotThrow(() => verifyInternalToken(key, resign(payload), now));
      assert.equal(verifyInternalToken(key, resign(payload), now), undefined, Buffer.from(payload, 'base64url').toString());
    }
  });
});
