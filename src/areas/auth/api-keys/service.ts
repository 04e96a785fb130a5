// Managing a tenant's API keys: create (the only time the plaintext exists
// outside the client), list, get, revoke, activate, delete. Every change that
// affects whether a key works is published on the invalidation bus, so the
// validator's cache drops the key before the response is sent.
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { Secrets } from '../../../platform/secrets.js';
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { requireTenantAdmin } from '../../../platform/authorization.js';
import { administeredTenant, existingTenant } from '../tenants/service.js';
import { generateApiKey, maskApiKey } from './key-format.js';
import { apiKeyRepository, type ApiKeyRow } from './repository.js';
import { limitsFrom, storedLimits } from '../../../platform/rate-limits/limits.js';
import { grantListFrom } from '../../../platform/mcp-grants.js';
import { pagedList, type ListQuery, type PageOf } from '../../paging.js';
import { API_KEY_LIMITS, type ApiKeyPatch, type ApiKeyRecord, type CreatedApiKey, type NewApiKey } from './schemas.js';

export interface ApiKeyDeps {
  db: Database;
  bus: InvalidationBus;
  secrets: Pick<Secrets, 'hash'>;
}

export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  maskedKey: row.masked_key,
  status: row.status,
  scopes: JSON.stringify(row.scopes),
  createdAt: row.created_at.toISOString(),
  ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
  ...(row.customer_id !== null ? { customerId: row.customer_id } : {}),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
  limits: limitsFrom(row.limits),
  mcp: { allow: grantListFrom(row.mcp?.allow) },
});

const SCOPE = new RegExp(API_KEY_LIMITS.scopePattern);
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const blank = (value: string) => value.trim() === '';

/** Validates a new key's fields (400 naming the field); returns the expiry, if any. */
export function checkNewApiKey(input: NewApiKey, now = Date.now()): Date | null {
  const { nameMaxLength, customerIdMaxLength, maxScopes, scopeMaxLength } = API_KEY_LIMITS;
  if (blank(input.name) || input.name.length > nameMaxLength)
    throw validation('name', `must be 1 to ${nameMaxLength} characters, not all blank`);
  const scopes = input.scopes ?? [];
  if (scopes.length > maxScopes) throw validation('scopes', `must hold at most ${maxScopes} scopes`);
  const badScope = scopes.find((scope) => scope.length > scopeMaxLength || !SCOPE.test(scope));
  if (badScope !== undefined)
    throw validation('scopes', `"${badScope}" is not a scope: letters and digits, then also : . _ * / - (at most ${scopeMaxLength})`);
  if (input.customerId !== undefined && (blank(input.customerId) || input.customerId.length > customerIdMaxLength)) {
    throw validation('customerId', `must be 1 to ${customerIdMaxLength} characters, not all blank`);
  }
  if (input.expiresAt === undefined) return null;
  const expiresAt = new Date(input.expiresAt);
  if (!ISO_8601.test(input.expiresAt) || Number.isNaN(expiresAt.getTime()))
    throw validation('expiresAt', 'must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z');
  if (expiresAt.getTime() <= now) throw validation('expiresAt', 'must be in the future');
  return expiresAt;
}

/** POST …/api-keys: an administrator of the tenant creates a key. */
export async function createApiKey(deps: ApiKeyDeps, principal: Principal, tenantId: string, input: NewApiKey): Promise<CreatedApiKey> {
  requireTenantAdmin(principal, tenantId);
  return issueApiKey(deps, tenantId, input, principal.subject);
}

/**
 * Creates a key for a tenant with no authorization check: for callers that are
 * trusted already (the route above, the operator's CLI). The plaintext is in the
 * result and nowhere else.
 */
export async function issueApiKey(
  deps: Pick<ApiKeyDeps, 'db' | 'secrets'>,
  tenantId: string,
  input: NewApiKey,
  createdBy: string | null,
  now = Date.now(),
): Promise<CreatedApiKey> {
  const expiresAt = checkNewApiKey(input, now);
  await existingTenant(deps, tenantId);
  const key = generateApiKey();
  const row = await apiKeyRepository.insert(deps.db, {
    id: newId('apiKey'),
    tenant_id: tenantId,
    customer_id: input.customerId ?? null,
    name: input.name,
    // Only the keyed hash is stored: a database leak does not leak usable keys.
    key_hash: deps.secrets.hash('api-key', key),
    masked_key: maskApiKey(key),
    scopes: [...new Set(input.scopes ?? [])],
    created_by: createdBy,
    expires_at: expiresAt,
  });
  const { id, name, ...rest } = toApiKey(row);
  return { id, name, key, ...rest };
}

/**
 * GET …/api-keys: a page of the tenant's keys, oldest first; `next` is the last key's id.
 * Without `limit` every matching key, as the list answered before it paged.
 */
export async function listApiKeys(
  deps: Pick<ApiKeyDeps, 'db'>,
  principal: Principal,
  tenantId: string,
  query: ListQuery = {},
): Promise<PageOf<ApiKeyRecord>> {
  requireTenantAdmin(principal, tenantId);
  await existingTenant(deps, tenantId);
  if (query.after !== undefined && !isId('apiKey', query.after)) throw validation('after', "must be an API key id (a page's next)");
  return pagedList(query, {
    range: { fallback: undefined, max: KEYS_PAGE_MAX },
    rows: (window) => apiKeyRepository.page(deps.db, tenantId, { ...window, after: query.after ?? null }),
    count: (pattern) => apiKeyRepository.count(deps.db, tenantId, pattern),
    toRecord: toApiKey,
    cursorOf: (row) => row.id,
  });
}

const KEYS_PAGE_MAX = 100;

/** A tenant's keys (masked, never a hash) with no authorization check: for callers trusted already (listApiKeys, the operator's CLI). 404 for an unknown tenant. */
export async function tenantApiKeys(deps: Pick<ApiKeyDeps, 'db'>, tenantId: string): Promise<ApiKeyRecord[]> {
  await existingTenant(deps, tenantId);
  return (await apiKeyRepository.list(deps.db, tenantId)).map(toApiKey);
}

export async function getApiKey(
  deps: Pick<ApiKeyDeps, 'db'>,
  principal: Principal,
  tenantId: string,
  keyId: string,
): Promise<ApiKeyRecord> {
  await administeredTenant(deps, principal, tenantId);
  const row = isId('apiKey', keyId) ? await apiKeyRepository.get(deps.db, tenantId, keyId) : undefined;
  if (!row) throw notFound('API key');
  return toApiKey(row);
}

/** Revoke or activate; both are idempotent and answer the key's record. */
export async function setApiKeyStatus(
  deps: ApiKeyDeps,
  principal: Principal,
  tenantId: string,
  keyId: string,
  status: ApiKeyRow['status'],
): Promise<ApiKeyRecord> {
  await administeredTenant(deps, principal, tenantId);
  const row = isId('apiKey', keyId) ? await apiKeyRepository.setStatus(deps.db, tenantId, keyId, status) : undefined;
  if (!row) throw notFound('API key');
  await deps.bus.publish({ kind: 'apiKey', id: keyId });
  return toApiKey(row);
}

/**
 * PATCH: sets what the body names (limits, MCP grant); every replica's validation cache
 * drops the key (both ride in the cached principal).
 */
export async function updateApiKey(
  deps: ApiKeyDeps,
  principal: Principal,
  tenantId: string,
  keyId: string,
  patch: ApiKeyPatch,
): Promise<ApiKeyRecord> {
  await administeredTenant(deps, principal, tenantId);
  if (patch.limits === undefined && patch.mcp === undefined) {
    const message = 'name at least one of limits, mcp';
    throw new AppError('VALIDATION_FAILED', message, { errors: ['limits', 'mcp'].map((field) => ({ field, message })) });
  }
  const changes = {
    ...(patch.limits !== undefined ? { limits: storedLimits(patch.limits) } : {}),
    // An empty grant is stored as none: a key with `allow: []` and a new key are the same.
    ...(patch.mcp !== undefined ? { mcp: patch.mcp?.allow.length ? { allow: patch.mcp.allow } : null } : {}),
  };
  const row = isId('apiKey', keyId) ? await apiKeyRepository.update(deps.db, tenantId, keyId, changes) : undefined;
  if (!row) throw notFound('API key');
  await deps.bus.publish({ kind: 'apiKey', id: keyId });
  return toApiKey(row);
}

export async function deleteApiKey(deps: ApiKeyDeps, principal: Principal, tenantId: string, keyId: string): Promise<void> {
  await administeredTenant(deps, principal, tenantId);
  const deleted = isId('apiKey', keyId) && (await apiKeyRepository.delete(deps.db, tenantId, keyId));
  if (!deleted) throw notFound('API key');
  await deps.bus.publish({ kind: 'apiKey', id: keyId });
}
