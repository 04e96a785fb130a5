import type { Database } from '../../../platform/db/database.js';
import { notFound, forbidden } from '../../../platform/errors.js';
import { newId, isId } from '../../../platform/ids.js';
import { isTenantAdmin, type Principal } from '../../../platform/identity.js';
import { workspaceRepository, type WorkspaceRow } from './repository.js';

export interface Workspace {
  id: string;
  name: string;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

export const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

// Creating and changing workspaces: a tenant admin, or an integration's API key.
function requireEditor(principal: Principal): void {
  if (principal.kind === 'apiKey' || isTenantAdmin(principal)) return;
  throw forbidden('Creating or changing workspaces needs the tenant admin role or an API key.');
}

export async function listWorkspaces(db: Database, principal: Principal): Promise<Workspace[]> {
  return (await workspaceRepository.list(db, principal.tenantId)).map(toWorkspace);
}

export async function getWorkspace(db: Database, principal: Principal, id: string): Promise<Workspace> {
  const row = isId('workspace', id) ? await workspaceRepository.get(db, principal.tenantId, id) : undefined;
  if (!row) throw notFound('Workspace');
  return toWorkspace(row);
}

export async function createWorkspace(db: Database, principal: Principal, input: { name: string; description?: string }): Promise<Workspace> {
  requireEditor(principal);
  const row = await workspaceRepository.insert(db, {
    id: newId('workspace'),
    tenant_id: principal.tenantId,
    name: input.name,
    description: input.description ?? null,
  });
  return toWorkspace(row);
}

export async function updateWorkspace(
  db: Database,
  principal: Principal,
  id: string,
  patch: { name?: string; description?: string | null },
): Promise<Workspace> {
  requireEditor(principal);
  const row = isId('workspace', id) ? await workspaceRepository.update(db, principal.tenantId, id, patch) : undefined;
  if (!row) throw notFound('Workspace');
  return toWorkspace(row);
}

export async function deleteWorkspace(db: Database, principal: Principal, id: string): Promise<void> {
  requireEditor(principal);
  const deleted = isId('workspace', id) && (await workspaceRepository.delete(db, principal.tenantId, id));
  if (!deleted) throw notFound('Workspace');
}
