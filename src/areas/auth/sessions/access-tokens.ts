// Access tokens: EdDSA JWTs (algorithm pinned; iss, aud, exp and typ checked).
// Verification is cached per token until it expires, so a signed-in user's
// requests cost one signature check per token, not one per request.
import { SignJWT, jwtVerify } from 'jose';
import type { Secrets } from '../../../platform/secrets.js';
import { TtlCache, type CacheStats } from '../../../platform/ttl-cache.js';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const AUDIENCE = 'gateway-api';

export interface AccessTokenClaims {
  userId: string;
  tenantId: string;
  expiresAt: number;
  /** The session (refresh-token family) the token was issued in: `sid`; absent on tokens issued outside one. */
  sessionId?: string;
  /** The user's session epoch when it was issued (`sep`); absent: 0 (tokens from before epochs). */
  sessionEpoch?: number;
}

export class AccessTokens {
  private readonly verified = new TtlCache<string, AccessTokenClaims>(50_000);

  constructor(
    private readonly secrets: Secrets,
    private readonly issuer: string,
    private readonly ttlMinutes: number,
  ) {}

  async issue(userId: string, tenantId: string, sessionId?: string, sessionEpoch = 0): Promise<{ token: string; expiresAt: Date }> {
    const expiresAt = new Date(Date.now() + this.ttlMinutes * 60_000);
    // `sid` names the session, so the Account page can tell the caller's own session apart (and spare it).
    // `sep`: the user's session epoch, so a token issued before a deactivation stays refused after a reactivation.
    const token = await new SignJWT({
      tid: tenantId,
      ...(sessionId ? { sid: sessionId } : {}),
      ...(sessionEpoch ? { sep: sessionEpoch } : {}),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: ACCESS_TOKEN_TYPE, kid: this.secrets.jwt.kid })
      .setSubject(userId)
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .setJti(crypto.randomUUID())
      .sign(this.secrets.jwt.privateKey);
    return { token, expiresAt };
  }

  /** Hits and misses of the verified-token cache (for /metrics). */
  get cacheStats(): CacheStats {
    return this.verified;
  }

  async verify(token: string): Promise<AccessTokenClaims | undefined> {
    const cached = this.verified.get(token);
    if (cached) return cached;
    try {
      const { payload } = await jwtVerify(token, this.secrets.jwt.publicKey, {
        algorithms: ['EdDSA'],
        issuer: this.issuer,
        audience: AUDIENCE,
        typ: ACCESS_TOKEN_TYPE,
        requiredClaims: ['sub', 'exp', 'tid'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string' || typeof payload.exp !== 'number') return undefined;
      const claims: AccessTokenClaims = { userId: payload.sub, tenantId: payload.tid, expiresAt: payload.exp * 1000 };
      if (typeof payload.sid === 'string') claims.sessionId = payload.sid;
      if (typeof payload.sep === 'number') claims.sessionEpoch = payload.sep;
      this.verified.set(token, claims, claims.expiresAt - Date.now());
      return claims;
    } catch {
      return undefined;
    }
  }
}
