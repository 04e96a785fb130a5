import type { Database, Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { AppError, notFound } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, type Principal } from '../../../platform/identity.js';
import { requirePlatformAdmin, requireTenantAdmin } from '../../../platform/authorization.js';
import { tenantRepository, type TenantRow } from './repository.js';
import { llmSettingsFrom, mergeLlmSettings, type LlmSettingsPatch, type TenantLlmSettings } from './settings.js';

export interface Tenant {
  id: string;
  name: string;
  status: TenantRow['status'];
  /** The tenant's llm settings (what `model: "auto"` means, which models it may use, stream compatibility). */
  settings: TenantLlmSettings;
  createdAt: string;
  updatedAt: string;
}

export interface TenantDeps {
  db: Database;
  bus: InvalidationBus;
}

export const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  status: row.status,
  settings: llmSettingsFrom(row.settings),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const duplicateName = (name: string) => new AppError('CONFLICT', `A tenant named "${name}" already exists.`);

export async function createTenant(q: Queryable, name: string): Promise<Tenant> {
  try {
    return toTenant(await tenantRepository.insert(q, newId('tenant'), name.trim()));
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
export async function administeredTenant(q: Queryable, principal: Principal, tenantId: string): Promise<TenantRow> {
  requireTenantAdmin(principal, tenantId);
  return existingTenant(q, tenantId);
}

/** The tenant's row, or 404: also for a string that is not a tenant id at all. */
export async function existingTenant(q: Queryable, tenantId: string): Promise<TenantRow> {
  const row = isId('tenant', tenantId) ? await tenantRepository.get(q, tenantId) : undefined;
  if (!row) throw notFound('Tenant');
  return row;
}

/** Every tenant, with no authorization check: for callers trusted already (listTenants, the operator's CLI). */
export async function allTenants(q: Queryable): Promise<Tenant[]> {
  return (await tenantRepository.list(q)).map(toTenant);
}

export async function listTenants(q: Queryable, principal: Principal): Promise<Tenant[]> {
  requirePlatformAdmin(principal);
  return allTenants(q);
}

export async function createTenantAs(q: Queryable, principal: Principal, name: string): Promise<Tenant> {
  requirePlatformAdmin(principal);
  return createTenant(q, name);
}

export async function getTenant(q: Queryable, principal: Principal, tenantId: string): Promise<Tenant> {
  return toTenant(await administeredTenant(q, principal, tenantId));
}

export interface TenantPatch extends LlmSettingsPatch {
  name?: string;
  status?: TenantRow['status'];
}

/**
 * A tenant admin may rename their tenant; only a platform admin changes its
 * status. A platform admin may not disable the tenant they belong to: that
 * would end their own session and could leave the platform without an
 * administrator who can sign in to undo it.
 */
export async function updateTenant(deps: TenantDeps, principal: Principal, tenantId: string, patch: TenantPatch): Promise<Tenant> {
  const current = await administeredTenant(deps.db, principal, tenantId);
  if (patch.status !== undefined) {
    if (!isPlatformAdmin(principal)) throw new AppError('FORBIDDEN', 'Only a platform admin may change a tenant\'s status.');
    if (patch.status === 'disabled' && principal.tenantId === tenantId) {
      throw new AppError('CONFLICT', 'You cannot disable the tenant your own account belongs to.');
    }
  }
  const name = patch.name?.trim();
  const settingsChanged = patch.defaultModel !== undefined || patch.allowedModels !== undefined || patch.streamMetadataChoices !== undefined;
  const settings = settingsChanged ? mergeLlmSettings(llmSettingsFrom(current.settings), patch) : undefined;
  if (name === undefined && patch.status === undefined && !settings) return toTenant(current);
  let row: TenantRow | undefined;
  try {
    row = await tenantRepository.update(deps.db, tenantId, {
      ...(name !== undefined ? { name } : {}),
      ...(patch.status ? { status: patch.status } : {}),
      ...(settings ? { settings: { ...settings } } : {}),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(name ?? '');
    throw error;
  }
  if (!row) throw notFound('Tenant');
  // Keys and sessions of a disabled tenant stop working on the next request, here
  // and (through the bus) on every replica; re-enabling restores them the same way.
  // The llm router's cached settings for the tenant drop on the same event.
  if ((patch.status !== undefined && patch.status !== current.status) || settings) await deps.bus.publish({ kind: 'tenant', id: tenantId });
  return toTenant(row);
}
