// Sign-in: password login (with throttling and the two-factor branch), sessions
// made of an access token plus a rotating refresh token, refresh, logout and /me.
//
// Refresh-token policy:
// - Opaque (32 random bytes), stored only as a keyed hash, grouped in families:
//   one family per login, every refresh adds a child and marks the parent rotated.
// - Presenting a token rotated longer ago than the grace period
//   (GATEWAY_REFRESH_REUSE_GRACE_SECONDS, default 10) is reuse: a sign that the
//   token was copied. The whole family is revoked, the newest token included.
// - Race policy: within the grace period a rotated token still yields a fresh pair
//   in the same family, so two tabs refreshing with the same token at once both
//   stay signed in. The grace period counts from the first rotation and never
//   extends; a revoked family (logout, reuse) is never revived by it.
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { decoyHash, verifyPassword } from '../../../platform/passwords.js';
import type { UserRow } from '../users/repository.js';
import { signedInUserRow, toUser, userById, userByLogin } from '../users/service.js';
import type { User } from '../users/schemas.js';
import { createChallenge } from './challenges.js';
import type { SessionDeps } from './deps.js';
import { refreshTokenRepository } from './repository.js';
import type { Session, TwoFactorRequired } from './schemas.js';
import type { Limit, Throttle } from './throttle.js';

// One wording for unknown user, wrong password, disabled user and disabled tenant.
const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 'The username or password is incorrect.');
const invalidRefreshToken = () => new AppError('INVALID_REFRESH_TOKEN', 'The refresh token is invalid, expired or revoked; sign in again.');

// `address` is request.ip: the socket's peer, or behind GATEWAY_TRUST_PROXY the entry
// our own proxy appended to X-Forwarded-For (never one the client wrote).
export const loginThrottleKeys = {
  account: (login: string) => `login:acct:${login.toLowerCase()}`,
  accountAtAddress: (login: string, ip: string) => `login:acct-ip:${login.toLowerCase()}|${ip}`,
  address: (ip: string) => `login:ip:${ip}`,
};

/**
 * Sign-in throttling: a hard limit per (account, address), so a stranger elsewhere
 * cannot lock the owner out; one per address across accounts (password spraying);
 * and per account across all addresses only a growing delay, far above the first
 * (guessing spread over many addresses). A success resets the (account, address)
 * count alone: the account-wide count is left to its window, so the owner's
 * sign-ins never wipe out failures a distributed guesser has run up.
 */
export function loginLimits(auth: SessionDeps['config']['auth'], login: string, address: string): Limit[] {
  return [
    { key: loginThrottleKeys.accountAtAddress(login, address), max: auth.loginMaxFailuresPerAccountAndAddress },
    { key: loginThrottleKeys.address(address), max: auth.loginMaxFailuresPerAddress },
    {
      key: loginThrottleKeys.account(login),
      backoff: { after: auth.loginAccountBackoffAfterFailures, maxDelaySeconds: auth.accountBackoffMaxSeconds },
    },
  ];
}

export async function login(
  deps: Pick<SessionDeps, 'db' | 'secrets' | 'config' | 'auth'>,
  throttle: Throttle,
  input: { username: string; password: string },
  address: string,
  userAgent?: string,
): Promise<Session | TwoFactorRequired> {
  const attempt = await throttle.begin(loginLimits(deps.config.auth, input.username, address));
  try {
    const row = await userByLogin(deps, input.username);
    // Unknown users are checked against a decoy hash so both cases take as long.
    // …and so are accounts with no password (SCIM-provisioned ones sign in through their identity provider).
    const stored = row?.password_hash.startsWith('scrypt$') ? row.password_hash : undefined;
    const passwordOk = (await verifyPassword(input.password, stored ?? (await decoyHash()))) && stored !== undefined;
    const active = row && passwordOk ? (await deps.auth.accounts.get(row.id))?.active === true : false;
    // An ssoOnly tenant's members (and its admins without TOTP) get the wrong-password answer.
    const refused =
      row && active
        ? await deps.auth.ssoHooks.passwordSignInRefused({ tenantId: row.tenant_id, roles: row.roles, totpEnabled: row.totp_enabled })
        : false;
    if (!row || !passwordOk || !active || refused) {
      await attempt.fail();
      throw invalidCredentials();
    }
    await attempt.reset(loginThrottleKeys.accountAtAddress(input.username, address));
    if (row.totp_enabled) {
      return { requiresTwoFactor: true, userId: row.id, twoFactorToken: (await createChallenge(deps, row.id)).token };
    }
    return await startSession(deps, row, { userAgent, address });
  } finally {
    attempt.end();
  }
}

/** Who signed a session in, as the Account page lists it: the User-Agent header and request.ip. */
export interface SessionClient {
  userAgent?: string | undefined;
  address?: string | undefined;
}

// A User-Agent is the client's to write: kept to a length a sessions list can show.
const USER_AGENT_MAX_LENGTH = 512;

/**
 * A signed-in session for `user` (after login, verify-2fa or an SSO sign-in): a new token
 * family, whose id comes back as `sessionId` for the caller (the wire shape leaves it out).
 */
export async function startSession(
  deps: Pick<SessionDeps, 'db' | 'secrets' | 'config' | 'auth'>,
  user: UserRow,
  client: SessionClient = {},
): Promise<Session & { sessionId: string }> {
  const refreshToken = newOpaqueToken();
  const familyId = newId('tokenFamily');
  await refreshTokenRepository.deleteExpired(deps.db, user.id);
  await refreshTokenRepository.insert(deps.db, {
    id: newId('refreshToken'),
    family_id: familyId,
    user_id: user.id,
    token_hash: deps.secrets.hash('refresh-token', refreshToken),
    expires_at: refreshExpiry(deps),
    user_agent: client.userAgent ? client.userAgent.slice(0, USER_AGENT_MAX_LENGTH) : null,
    address: client.address ?? null,
  });
  return { ...(await accessToken(deps, user, familyId)), refreshToken, user: toUser(user), sessionId: familyId };
}

export async function refresh(
  deps: Pick<SessionDeps, 'db' | 'secrets' | 'config' | 'auth'>,
  presented: string | undefined,
  log: FastifyBaseLogger,
): Promise<Session> {
  if (!presented) throw invalidRefreshToken();
  const tokenHash = deps.secrets.hash('refresh-token', presented);
  const known = await refreshTokenRepository.findByHash(deps.db, tokenHash);
  if (!known) throw invalidRefreshToken();

  const refreshToken = newOpaqueToken();
  const rotated = await deps.db.tx(async (q) => {
    const parent = await refreshTokenRepository.rotate(q, tokenHash, deps.config.auth.refreshReuseGraceSeconds);
    if (!parent) return undefined;
    await refreshTokenRepository.insert(q, {
      id: newId('refreshToken'),
      family_id: parent.family_id,
      user_id: parent.user_id,
      token_hash: deps.secrets.hash('refresh-token', refreshToken),
      expires_at: refreshExpiry(deps),
      // The session keeps the client that signed it in.
      user_agent: parent.user_agent,
      address: parent.address,
    });
    return parent;
  });
  if (!rotated) {
    // Expired or revoked tokens just fail; a token rotated too long ago is reuse.
    const current = await refreshTokenRepository.findByHash(deps.db, tokenHash);
    if (current?.rotated_at && !current.revoked_at) {
      await refreshTokenRepository.revokeFamily(deps.db, current.family_id);
      log.warn({ userId: current.user_id, familyId: current.family_id }, 'refresh token reuse detected; session family revoked');
    }
    throw invalidRefreshToken();
  }

  const user = await userById(deps, rotated.user_id);
  const state = user ? await deps.auth.accounts.get(user.id) : null;
  if (!user || !state?.active) {
    await refreshTokenRepository.revokeFamily(deps.db, rotated.family_id);
    throw invalidRefreshToken();
  }
  return { ...(await accessToken(deps, user, rotated.family_id)), refreshToken, user: toUser(user) };
}

/** Ends the session the refresh token belongs to (its whole family) and answers its id. Unknown tokens are ignored. */
export async function logout(deps: Pick<SessionDeps, 'db' | 'secrets'>, presented: string | undefined): Promise<string | undefined> {
  if (!presented) return undefined;
  const known = await refreshTokenRepository.findByHash(deps.db, deps.secrets.hash('refresh-token', presented));
  if (!known) return undefined;
  await refreshTokenRepository.revokeFamily(deps.db, known.family_id);
  return known.family_id;
}

export async function currentUser(deps: Pick<SessionDeps, 'db'>, principal: Principal): Promise<User> {
  return toUser(await signedInUserRow(deps, principal));
}

/**
 * Ends every session of a user: each refresh token stops working (a new password,
 * a disabled account). Access tokens already issued run out on their own; the
 * account state they are checked against changes at once.
 */
export async function endSessions(deps: Pick<SessionDeps, 'db'>, userId: string): Promise<void> {
  await refreshTokenRepository.revokeAllForUser(deps.db, userId);
}

function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

function refreshExpiry(deps: Pick<SessionDeps, 'config'>): Date {
  return new Date(Date.now() + deps.config.auth.refreshTokenTtlDays * 86_400_000);
}

async function accessToken(deps: Pick<SessionDeps, 'auth'>, user: UserRow, sessionId: string) {
  const { token, expiresAt } = await deps.auth.accessTokens.issue(user.id, user.tenant_id, sessionId, user.session_epoch);
  return { token, expiresAt: expiresAt.toISOString() };
}
