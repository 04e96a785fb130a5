// Managing a tenant's SCIM tokens: create (the only time the token exists outside the
// client), list, delete. A token is stored as a keyed hash only and is bound to its
// tenant: the SCIM routes act on that tenant and nothing else. The validator reads the
// database on every use (no cache), so a delete is refused by the next request on
// every replica, with nothing to invalidate.
import type { Database } from '../../../platform/db/database.js';
import type { Secrets } from '../../../platform/secrets.js';
import { notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { administeredTenant, existingTenant } from '../tenants/service.js';
import type { PageOf } from '../../paging.js';
import { generateScimToken, maskScimToken } from './token-format.js';
import { scimTokenRepository, type ScimTokenRow } from './repository.js';
import { SCIM_TOKEN_NAME_MAX_LENGTH, type CreatedScimToken, type NewScimToken, type ScimTokenRecord } from './schemas.js';

export interface ScimTokenDeps {
  db: Database;
  secrets: Pick<Secrets, 'hash'>;
}

const toScimToken = (row: ScimTokenRow): ScimTokenRecord => ({
  id: row.id,
  name: row.name,
  maskedToken: row.masked_token,
  createdAt: row.created_at.toISOString(),
  expiresAt: row.expires_at?.toISOString() ?? null,
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function checkNewToken(input: NewScimToken, now: number): Date | null {
  if (input.name.trim() === '' || input.name.length > SCIM_TOKEN_NAME_MAX_LENGTH)
    throw validation('name', `must be 1 to ${SCIM_TOKEN_NAME_MAX_LENGTH} characters, not all blank`);
  if (input.expiresAt === undefined) return null;
  const expiresAt = new Date(input.expiresAt);
  if (!ISO_8601.test(input.expiresAt) || Number.isNaN(expiresAt.getTime()))
    throw validation('expiresAt', 'must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z');
  if (expiresAt.getTime() <= now) throw validation('expiresAt', 'must be in the future');
  return expiresAt;
}

/** POST …/scim-tokens: a tenant admin (or a platform admin) creates one; the answer holds the token, once. */
export async function createScimToken(
  deps: ScimTokenDeps,
  principal: Principal,
  tenantId: string,
  input: NewScimToken,
): Promise<CreatedScimToken> {
  await administeredTenant(deps, principal, tenantId);
  return issueScimToken(deps, tenantId, input, principal.subject);
}

/** Creates a token with no authorization check: for callers trusted already (the route above, tests' seeding). */
export async function issueScimToken(
  deps: ScimTokenDeps,
  tenantId: string,
  input: NewScimToken,
  createdBy: string | null,
  now = Date.now(),
): Promise<CreatedScimToken> {
  const expiresAt = checkNewToken(input, now);
  await existingTenant(deps, tenantId);
  const token = generateScimToken();
  const row = await scimTokenRepository.insert(deps.db, {
    id: newId('scimToken'),
    tenant_id: tenantId,
    name: input.name,
    // Only the keyed hash is stored: a database leak does not leak usable tokens.
    token_hash: deps.secrets.hash('scim-token', token),
    masked_token: maskScimToken(token),
    created_by: createdBy,
    expires_at: expiresAt,
  });
  return { ...toScimToken(row), token };
}

/** GET …/scim-tokens: every token of the tenant, oldest first (a tenant has a handful). */
export async function listScimTokens(
  deps: Pick<ScimTokenDeps, 'db'>,
  principal: Principal,
  tenantId: string,
): Promise<PageOf<ScimTokenRecord>> {
  await administeredTenant(deps, principal, tenantId);
  const data = (await scimTokenRepository.list(deps.db, tenantId)).map(toScimToken);
  return { data, next: null, total: data.length };
}

/** DELETE …/scim-tokens/{id}: the token stops working at once (the validator does not cache). */
export async function deleteScimToken(deps: Pick<ScimTokenDeps, 'db'>, principal: Principal, tenantId: string, tokenId: string) {
  await administeredTenant(deps, principal, tenantId);
  const deleted = isId('scimToken', tokenId) && (await scimTokenRepository.delete(deps.db, tenantId, tokenId));
  if (!deleted) throw notFound('SCIM token');
}
