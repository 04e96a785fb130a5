// The signed-in person's own account: their sessions (list, end one, end all) and
// their password. A session is a refresh-token family (one per sign-in); the access
// token names its family in `sid`, which is how the caller's own session is known.
//
// Ending a session revokes its refresh tokens, so it cannot refresh again; an access
// token it already holds runs out on its own (GATEWAY_ACCESS_TOKEN_TTL_MINUTES), as
// after a password reset by an admin (endSessions).
import { validation, notFound } from '../../../platform/errors.js';
import { isId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { requireUser } from '../../../platform/authorization.js';
import { verifyPassword } from '../../../platform/passwords.js';
import { replacePassword, signedInUserRow } from '../users/service.js';
import type { SessionDeps } from './deps.js';
import { refreshTokenRepository, type SessionRow } from './repository.js';
import type { PasswordChange, SessionRecord } from './schemas.js';
import { loginLimits, loginThrottleKeys } from './service.js';
import type { Throttle } from './throttle.js';

const toSession = (row: SessionRow, principal: Principal): SessionRecord => ({
  id: row.id,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  userAgent: row.user_agent,
  address: row.address,
  current: row.id === principal.sessionId,
});

/** GET /api/auth/sessions: the caller's live sessions, most recently used first. */
export async function listSessions(deps: Pick<SessionDeps, 'db'>, principal: Principal): Promise<SessionRecord[]> {
  const user = await signedInUserRow(deps, principal);
  return (await refreshTokenRepository.liveSessions(deps.db, user.id)).map((row) => toSession(row, principal));
}

/** DELETE /api/auth/sessions/{sessionId}: ends one of the caller's live sessions; 404 for anything else. */
export async function endSession(deps: Pick<SessionDeps, 'db'>, principal: Principal, sessionId: string): Promise<void> {
  requireUser(principal);
  const ended = isId('tokenFamily', sessionId) && (await refreshTokenRepository.revokeLiveFamily(deps.db, principal.subject, sessionId));
  if (!ended) throw notFound('Session');
}

/** POST /api/auth/logout-all: sign-out everywhere, this session included. */
export async function endAllSessions(deps: Pick<SessionDeps, 'db'>, principal: Principal): Promise<void> {
  const user = await signedInUserRow(deps, principal);
  await refreshTokenRepository.revokeAllForUser(deps.db, user.id);
}

/**
 * POST /api/auth/password: a new password once the current one is proven. A wrong one
 * is a 400 naming the field (the access token is fine; a 401 would tell clients to
 * refresh it) and counts as a failed sign-in of the account at this address, so the
 * form cannot be used to guess passwords faster than the login can. Every other
 * session ends: whoever else holds one (perhaps with the old password) is signed out.
 */
export async function changePassword(
  deps: Pick<SessionDeps, 'db' | 'config'>,
  throttle: Throttle,
  principal: Principal,
  input: PasswordChange,
  address: string,
): Promise<void> {
  const user = await signedInUserRow(deps, principal);
  const attempt = await throttle.begin(loginLimits(deps.config.auth, user.username, address));
  try {
    if (!(await verifyPassword(input.currentPassword, user.password_hash))) {
      await attempt.fail();
      throw validation('currentPassword', 'is incorrect');
    }
    await attempt.reset(loginThrottleKeys.accountAtAddress(user.username, address));
  } finally {
    attempt.end();
  }
  if (input.newPassword === input.currentPassword) throw validation('newPassword', 'must differ from the current password');
  await replacePassword(deps, user, input.newPassword);
  // Without a session in the token (one issued outside a sign-in) none is spared.
  await refreshTokenRepository.revokeAllForUser(deps.db, user.id, principal.sessionId ?? null);
}
