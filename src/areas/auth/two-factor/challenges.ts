// The login challenge of a two-factor user: an opaque, single-use token that
// stands for "password checked" for five minutes, stored only as a keyed hash.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../../context.js';
import { newId } from '../../../platform/ids.js';
import { twoFactorRepository } from './repository.js';

export const CHALLENGE_TTL_MS = 5 * 60_000;

export async function createChallenge(deps: Pick<AppContext, 'db' | 'secrets'>, userId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await twoFactorRepository.deleteStaleChallenges(deps.db, userId);
  await twoFactorRepository.insertChallenge(deps.db, {
    id: newId('challenge'),
    user_id: userId,
    token_hash: deps.secrets.hash('challenge', token),
    expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
  });
  return token;
}
