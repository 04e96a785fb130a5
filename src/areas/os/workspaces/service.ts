// Workspaces: plain functions over the caller's tenant (always the principal's,
// never one named in the request); the routes are in routes.ts, the SQL in repository.ts.
import type { Database } from '../../../platform/db/database.js';
import { notFound, forbidden } from '../../../platform/errors.js';
import { newId, isId } from '../../../platform/ids.js';
import { isTenantAdmin, type Principal } from '../../../platform/identity.js';
import { createDefaultCollection } from '../collections/service.js';
import { workspaceRepository, type WorkspaceRow } from './repository.js';
import type { NewWorkspace, Workspace, WorkspacePatch } from './schemas.js';

export interface WorkspaceDeps {
  db: Database;
  /** Whether pgvector is installed: a new workspace's default collection then gets the built-in embedder. */
  vector: boolean;
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

export async function listWorkspaces(deps: WorkspaceDeps, principal: Principal): Promise<Workspace[]> {
  return (await workspaceRepository.list(deps.db, principal.tenantId)).map(toWorkspace);
}

export async function getWorkspace(deps: WorkspaceDeps, principal: Principal, id: string): Promise<Workspace> {
  const row = isId('workspace', id) ? await workspaceRepository.get(deps.db, principal.tenantId, id) : undefined;
  if (!row) throw notFound('Workspace');
  return toWorkspace(row);
}

export async function createWorkspace(deps: WorkspaceDeps, principal: Principal, input: NewWorkspace): Promise<Workspace> {
  requireEditor(principal);
  // One transaction: no workspace is ever seen without its default collection.
  const row = await deps.db.tx(async (q) => {
    const workspace = await workspaceRepository.insert(q, {
      id: newId('workspace'),
      tenant_id: principal.tenantId,
      name: input.name,
      description: input.description ?? null,
    });
    await createDefaultCollection(q, deps, principal.tenantId, workspace.id);
    return workspace;
  });
  return toWorkspace(row);
}

export async function updateWorkspace(deps: WorkspaceDeps, principal: Principal, id: string, patch: WorkspacePatch): Promise<Workspace> {
  requireEditor(principal);
  const row = isId('workspace', id) ? await workspaceRepository.update(deps.db, principal.tenantId, id, patch) : undefined;
  if (!row) throw notFound('Workspace');
  return toWorkspace(row);
}

export async function deleteWorkspace(deps: WorkspaceDeps, principal: Principal, id: string): Promise<void> {
  requireEditor(principal);
  const deleted = isId('workspace', id) && (await workspaceRepository.delete(deps.db, principal.tenantId, id));
  if (!deleted) throw notFound('Workspace');
}
