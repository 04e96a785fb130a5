// Tenants: creating them (platform admins, the CLI, the first start), reading and
// changing them, and the "tenant an administrator may act on" check that users and
// API keys start from.
import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, type Principal } from '../../../platform/identity.js';
import { requirePlatformAdmin, requireTenantAdmin } from '../../../platform/authorization.js';
import { pagedList, type ListQuery, type PageOf } from '../../paging.js';
import { tenantRepository, type TenantRow } from './repository.js';
import type { Tenant, TenantPatch, TenantSettingsFields } from './schemas.js';
import { limitsFrom, storedLimits } from '../../../platform/rate-limits/limits.js';

export interface TenantDeps {
  /** A transaction will do: the first start creates its tenant inside one. */
  db: Queryable;
  bus: InvalidationBus;
  /** The settings another area keeps on the tenant record; the composition root says whose (src/context.ts). */
  tenantSettings: TenantSettingsFields;
}

export const toTenant = (deps: Pick<TenantDeps, 'tenantSettings'>, row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  status: row.status,
  settings: deps.tenantSettings.read(row.settings),
  limits: limitsFrom(row.limits),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const duplicateName = (name: string) => new AppError('CONFLICT', `A tenant named "${name}" already exists.`);

export async function createTenant(deps: Pick<TenantDeps, 'db' | 'tenantSettings'>, name: string): Promise<Tenant> {
  try {
    return toTenant(deps, await tenantRepository.insert(deps.db, newId('tenant'), name.trim()));
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(name.trim());
    throw error;
  }
}

/**
 * The tenant an administrator may act on, or 404. Callers that administer a
 * tenant's users and keys use this first, so a platform admin naming a tenant
 * that does not exist gets 404 rather than an empty list.
 */
export async function administeredTenant(deps: Pick<TenantDeps, 'db'>, principal: Principal, tenantId: string): Promise<TenantRow> {
  requireTenantAdmin(principal, tenantId);
  return existingTenant(deps, tenantId);
}

/** The tenant's row, or 404: also for a string that is not a tenant id at all. */
export async function existingTenant(deps: Pick<TenantDeps, 'db'>, tenantId: string): Promise<TenantRow> {
  const row = isId('tenant', tenantId) ? await tenantRepository.get(deps.db, tenantId) : undefined;
  if (!row) throw notFound('Tenant');
  return row;
}

/** Every tenant, with no authorization check: for callers trusted already (listTenants, the operator's CLI). */
export async function allTenants(deps: Pick<TenantDeps, 'db' | 'tenantSettings'>): Promise<Tenant[]> {
  return (await tenantRepository.list(deps.db)).map((row) => toTenant(deps, row));
}

/**
 * GET /tenants: a page of every tenant, oldest first; `next` is the last tenant's id.
 * Without `limit` every matching tenant, as the list answered before it paged.
 */
export async function listTenants(
  deps: Pick<TenantDeps, 'db' | 'tenantSettings'>,
  principal: Principal,
  query: ListQuery = {},
): Promise<PageOf<Tenant>> {
  requirePlatformAdmin(principal);
  if (query.after !== undefined && !isId('tenant', query.after)) throw validation('after', "must be a tenant id (a page's next)");
  return pagedList(query, {
    range: { fallback: undefined, max: TENANTS_PAGE_MAX },
    rows: (window) => tenantRepository.page(deps.db, { ...window, after: query.after ?? null }),
    count: (pattern) => tenantRepository.countMatching(deps.db, pattern),
    toRecord: (row) => toTenant(deps, row),
    cursorOf: (row) => row.id,
  });
}

const TENANTS_PAGE_MAX = 100;

export async function createTenantAs(deps: Pick<TenantDeps, 'db' | 'tenantSettings'>, principal: Principal, name: string): Promise<Tenant> {
  requirePlatformAdmin(principal);
  return createTenant(deps, name);
}

export async function getTenant(deps: Pick<TenantDeps, 'db' | 'tenantSettings'>, principal: Principal, tenantId: string): Promise<Tenant> {
  return toTenant(deps, await administeredTenant(deps, principal, tenantId));
}

/**
 * A tenant admin may rename their tenant; only a platform admin changes its
 * status. A platform admin may not disable the tenant they belong to: that
 * would end their own session and could leave the platform without an
 * administrator who can sign in to undo it.
 */
export async function updateTenant(deps: TenantDeps, principal: Principal, tenantId: string, patch: TenantPatch): Promise<Tenant> {
  const current = await administeredTenant(deps, principal, tenantId);
  if (patch.status !== undefined) {
    if (!isPlatformAdmin(principal)) throw new AppError('FORBIDDEN', "Only a platform admin may change a tenant's status.");
    if (patch.status === 'disabled' && principal.tenantId === tenantId) {
      throw new AppError('CONFLICT', 'You cannot disable the tenant your own account belongs to.');
    }
  }
  // A tenant's own admin may not lift the limits the platform set on it.
  if (patch.limits !== undefined && !isPlatformAdmin(principal))
    throw new AppError('FORBIDDEN', "Only a platform admin may change a tenant's limits.");
  const limits = patch.limits !== undefined ? storedLimits(patch.limits) : undefined;
  const name = patch.name?.trim();
  const settingsPatch = settingsFieldsOf(deps.tenantSettings, patch);
  const settings = settingsPatch ? deps.tenantSettings.merge(deps.tenantSettings.read(current.settings), settingsPatch) : undefined;
  if (name === undefined && patch.status === undefined && !settings && limits === undefined) return toTenant(deps, current);
  let row: TenantRow | undefined;
  try {
    row = await tenantRepository.update(deps.db, tenantId, {
      ...(name !== undefined ? { name } : {}),
      ...(patch.status ? { status: patch.status } : {}),
      ...(settings ? { settings: { ...settings } } : {}),
      ...(limits !== undefined ? { limits } : {}),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(name ?? '');
    throw error;
  }
  if (!row) throw notFound('Tenant');
  // Keys and sessions of a disabled tenant stop working on the next request, here
  // and (through the bus) on every replica; re-enabling restores them the same way.
  // The llm router's cached settings for the tenant drop on the same event.
  // So do its cached limits (they ride with the llm settings).
  if ((patch.status !== undefined && patch.status !== current.status) || settings || limits !== undefined)
    await deps.bus.publish({ kind: 'tenant', id: tenantId });
  return toTenant(deps, row);
}

/** The settings fields the PATCH sent (null counts: it clears a setting); undefined when it sent none. */
function settingsFieldsOf(fields: TenantSettingsFields, patch: TenantPatch): Record<string, unknown> | undefined {
  const sent = Object.keys(fields.patch.properties).filter((field) => patch[field] !== undefined);
  return sent.length > 0 ? Object.fromEntries(sent.map((field) => [field, patch[field]])) : undefined;
}
