// Resolves a presented SCIM token to its principal: the tenant it is bound to and the
// token's id, nothing more (no roles, no user). Read from the database on every use:
// SCIM traffic is a provisioning client's, and a deleted or expired token must be
// refused by the very next request on every replica, with no cache to invalidate.
import type { Database } from '../../../platform/db/database.js';
import type { Principal } from '../../../platform/identity.js';
import type { Secrets } from '../../../platform/secrets.js';
import { isWellFormedScimToken } from './token-format.js';
import { scimTokenRepository } from './repository.js';

export class ScimTokenValidator {
  constructor(
    private readonly db: Database,
    private readonly secrets: Pick<Secrets, 'hash'>,
  ) {}

  async resolve(token: string, now = Date.now()): Promise<Principal | undefined> {
    if (!isWellFormedScimToken(token)) return undefined;
    const row = await scimTokenRepository.findByHash(this.db, this.secrets.hash('scim-token', token));
    if (row?.tenant_status !== 'active') return undefined;
    if (row.expires_at !== null && row.expires_at.getTime() <= now) return undefined;
    // Best effort: a failed write of the last use never refuses the request.
    void scimTokenRepository.recordUse(this.db, row.id).catch(() => undefined);
    return { tenantId: row.tenant_id, kind: 'scim', subject: row.id, roles: [], scopes: [] };
  }
}
