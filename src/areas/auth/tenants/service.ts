import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { tenantRepository, type TenantRow } from './repository.js';

export interface Tenant {
  id: string;
  name: string;
  status: TenantRow['status'];
  createdAt: string;
  updatedAt: string;
}

export const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  status: row.status,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export async function createTenant(q: Queryable, name: string): Promise<Tenant> {
  try {
    return toTenant(await tenantRepository.insert(q, newId('tenant'), name.trim()));
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('CONFLICT', `A tenant named "${name.trim()}" already exists.`);
    throw error;
  }
}
