// The login challenge of a two-factor user: an opaque, single-use token that
// stands for "password checked" for five minutes, stored only as a keyed hash.
// Login hands it out; verify-2fa (the two-factor feature) spends and consumes it
// through the functions here, so the challenge has this one home.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../../platform/db/database.js';
import { newId } from '../../../platform/ids.js';
import type { SessionDeps } from './deps.js';
import { challengeRepository } from './repository.js';

export const CHALLENGE_TTL_MS = 5 * 60_000;

/** A new challenge for `userId`: the token the client holds, and its id (an SSO sign-in keeps its session record under it). */
export async function createChallenge(deps: Pick<SessionDeps, 'db' | 'secrets'>, userId: string): Promise<{ token: string; id: string }> {
  const token = randomBytes(32).toString('base64url');
  const id = newId('challenge');
  await challengeRepository.deleteStale(deps.db, userId);
  await challengeRepository.insert(deps.db, {
    id,
    user_id: userId,
    token_hash: deps.secrets.hash('challenge', token),
    expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
  });
  return { token, id };
}

/**
 * Counts one attempt against the challenge the token stands for and answers it
 * (its id and user); nothing once it is consumed, expired or out of attempts
 * (GATEWAY_2FA_MAX_ATTEMPTS_PER_CHALLENGE).
 */
export async function spendChallengeAttempt(
  deps: Pick<SessionDeps, 'db' | 'secrets' | 'config'>,
  token: string,
): Promise<{ id: string; userId: string } | undefined> {
  const tokenHash = deps.secrets.hash('challenge', token);
  const row = await challengeRepository.spendAttempt(deps.db, tokenHash, deps.config.auth.twoFactorMaxAttemptsPerChallenge);
  return row && { id: row.id, userId: row.user_id };
}

/** Uses the challenge up; false when another request did first. */
export function consumeChallenge(deps: Pick<SessionDeps, 'db'>, challengeId: string): Promise<boolean> {
  return challengeRepository.consume(deps.db, challengeId);
}

/** Every open challenge of the user stops working. `db` may be a transaction (two-factor's disable runs in one). */
export function endChallenges(deps: { db: Queryable }, userId: string): Promise<void> {
  return challengeRepository.consumeAllForUser(deps.db, userId);
}
