// Ending everything a person can do, at once, when their identity provider says they
// are gone (SCIM `active: false`, or a DELETE): every refresh-token family is revoked
// (and every two-factor challenge of a sign-in under way),
// the session epoch moves on (access tokens already issued are refused, and stay
// refused after a reactivation: that needs a fresh sign-in), the API keys they created
// are revoked, and one `user` message on the invalidation bus makes every replica drop
// the account's cached state and those keys before its next request.
import type { Queryable } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { challengeRepository, refreshTokenRepository } from '../sessions/repository.js';
import { apiKeyRepository } from '../api-keys/repository.js';
import { scimRepository } from './repository.js';

/** In the transaction that deactivates or deletes the user; `announce` after it commits. */
export async function endAllAccess(q: Queryable, tenantId: string, userId: string): Promise<void> {
  await refreshTokenRepository.revokeAllForUser(q, userId);
  // A sign-in half done (password given, two-factor code not yet) cannot be finished later either.
  await challengeRepository.consumeAllForUser(q, userId);
  await scimRepository.bumpSessionEpoch(q, userId);
  await apiKeyRepository.revokeCreatedBy(q, tenantId, userId);
}

/** Tells every replica (the account state and API key caches listen for it). */
export function announce(bus: InvalidationBus, userId: string): Promise<void> {
  return bus.publish({ kind: 'user', id: userId });
}
