// Signing out of an SSO session. RP-initiated: the gateway's own logout ends the
// session and answers the IdP's end-session URL (id_token_hint, post_logout_redirect_uri)
// for the browser to visit. Back-channel (OpenID Connect Back-Channel Logout 1.0): the
// IdP posts a signed logout_token naming the IdP session (sid) or the person (sub), and
// every gateway session that sign-in started ends: its refresh tokens stop working at
// once; an access token already issued runs out on its own, as after any sign-out.
import { decodeJwt, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { AppError, notFound } from '../../../platform/errors.js';
import { isId } from '../../../platform/ids.js';
import type { SsoHooks } from '../sessions/deps.js';
import { refreshTokenRepository } from '../sessions/repository.js';
import type { SsoDeps } from './deps.js';
import type { IdpClients } from './providers.js';
import { connectionRepository, logoutTokenRepository, ssoSessionRepository } from './repository.js';

const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
// A logout token is sent right after the IdP's sign-out: one issued longer ago than this is refused.
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 600;
const CLOCK_TOLERANCE_SECONDS = 60;

/** What sign-in and sign-out ask of SSO (sessions/deps.ts SsoHooks). */
export function ssoHooks(deps: { db: SsoDeps['db']; secrets: Pick<SsoDeps['secrets'], 'decrypt'>; clients: IdpClients }): SsoHooks {
  return {
    async passwordSignInRefused(user) {
      if (!(await connectionRepository.ssoOnly(deps.db, user.tenantId))) return false;
      // Break-glass: the tenant's admins keep a password sign-in, with TOTP required.
      const admin = user.roles.includes('admin') || user.roles.includes('platform_admin');
      return !admin || !user.totpEnabled;
    },

    async endSessionUrl(sessionId, origin) {
      const record = await ssoSessionRepository.byFamily(deps.db, sessionId);
      if (!record) return undefined;
      await ssoSessionRepository.deleteByFamilies(deps.db, [sessionId]);
      const connection = await connectionRepository.get(deps.db, record.connection_id);
      if (!connection) return undefined;
      try {
        const configuration = await deps.clients.configuration(connection);
        if (!configuration.serverMetadata().end_session_endpoint) return undefined;
        return client.buildEndSessionUrl(configuration, {
          id_token_hint: deps.secrets.decrypt(record.id_token),
          post_logout_redirect_uri: `${origin}/`,
        }).href;
      } catch {
        // The IdP unreachable: the gateway's session has ended all the same.
        return undefined;
      }
    },

    twoFactorCompleted: (challengeId, sessionId) => ssoSessionRepository.bindChallenge(deps.db, challengeId, sessionId),
  };
}

const invalidLogoutToken = (why: string) => new AppError('BAD_REQUEST', `The logout_token is not valid: ${why}.`);

/** POST /api/auth/sso/backchannel-logout/{connectionId}: ends the sessions the IdP's logout token names; answers how many. */
export async function backchannelLogout(
  deps: Pick<SsoDeps, 'db' | 'secrets' | 'auth'>,
  connectionId: string,
  logoutToken: string,
): Promise<number> {
  const connection = isId('ssoConnection', connectionId) ? await connectionRepository.get(deps.db, connectionId) : undefined;
  if (!connection) throw notFound('SSO connection');
  // Cheap checks before the IdP is asked for its keys: a stranger's garbage never makes the gateway fetch anything.
  let unverified: Record<string, unknown>;
  try {
    unverified = decodeJwt(logoutToken);
  } catch {
    throw invalidLogoutToken('it is not a JWT');
  }
  const audiences = [unverified.aud].flat();
  if (unverified.iss !== connection.issuer || !audiences.includes(connection.client_id))
    throw invalidLogoutToken("its issuer or audience is not this connection's");
  let keys: Awaited<ReturnType<IdpClients['keys']>>;
  let algorithms: string[];
  try {
    keys = await deps.auth.sso.clients.keys(connection);
    const supported = (await deps.auth.sso.clients.configuration(connection)).serverMetadata().id_token_signing_alg_values_supported;
    algorithms = (supported ?? ['RS256']).filter((alg) => alg !== 'none');
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', "The IdP's signing keys could not be read; try again.", { retryAfterSeconds: 5 });
  }
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(logoutToken, keys, {
      issuer: connection.issuer,
      audience: connection.client_id,
      algorithms,
      requiredClaims: ['iat', 'jti', 'events'],
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    throw invalidLogoutToken((error as Error).message);
  }
  const events = claims.events as Record<string, unknown> | undefined;
  if (!events || typeof events[BACKCHANNEL_EVENT] !== 'object') throw invalidLogoutToken('it carries no back-channel logout event');
  if ('nonce' in claims) throw invalidLogoutToken('it carries a nonce (an ID token is not a logout token)');
  const sid = typeof claims.sid === 'string' ? claims.sid : undefined;
  const subject = typeof claims.sub === 'string' ? claims.sub : undefined;
  if (!sid && !subject) throw invalidLogoutToken('it names neither sid nor sub');

  const expires = new Date(
    ((typeof claims.exp === 'number' ? claims.exp : (claims.iat as number) + LOGOUT_TOKEN_MAX_AGE_SECONDS) + CLOCK_TOLERANCE_SECONDS) *
      1000,
  );
  const jti = deps.secrets.hash('sso-logout-token', `${connection.issuer} ${String(claims.jti)}`);
  // A token acted on before is answered as a success that does nothing: the IdP may retry.
  if (!(await logoutTokenRepository.remember(deps.db, jti, expires))) return 0;
  const sessions = await ssoSessionRepository.families(deps.db, connection.id, {
    ...(sid ? { sid } : {}),
    ...(subject ? { subject } : {}),
  });
  const families = [...new Set(sessions.map((s) => s.family_id))];
  for (const familyId of families) await refreshTokenRepository.revokeFamily(deps.db, familyId);
  await ssoSessionRepository.deleteByFamilies(deps.db, families);
  return families.length;
}
