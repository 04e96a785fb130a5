// Compute nodes through the API. Who may do what:
// - platform admin: every node; creates shared nodes (tenantIds empty = all tenants)
//   or nodes for named tenants; config nodes are read-only (409) for everyone.
// - tenant admin: creates and manages nodes of their own tenant (tenantIds is
//   always [their tenant]); also sees, read-only and without url, tenantIds or
//   errors, the shared nodes that serve their tenant. Any other node: 404.
// - members and API keys: 403, reads included (nodes are infrastructure; the
//   models list is what integrations read).
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { Secrets } from '../../../platform/secrets.js';
import { AppError, forbidden, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, isTenantAdmin, type Principal } from '../../../platform/identity.js';
import { ownedBy, serves, type NodeDefinition } from '../router/node-runtime.js';
import type { NodeRegistry } from '../router/registry.js';
import { checkCallerUrl, urlScopeOf, type UrlPolicyDeps } from '../outbound/url-policy.js';
import { computeNodeRepository, type ComputeNodeChanges, type ComputeNodeRow } from './repository.js';
import { definitionFromRow } from './definitions.js';
import type { ComputeNode, NewNode, NodeHealth, NodePatch } from './schemas.js';

export interface NodeDeps extends UrlPolicyDeps {
  db: Database;
  /** Node API keys are stored encrypted. */
  secrets: Pick<Secrets, 'encrypt' | 'decrypt'>;
  /** A change is published as a `computeNode` invalidation, for every replica's registry. */
  bus: Pick<InvalidationBus, 'publish'>;
  /** This process's registry: the config nodes, each node's health, and the reload after a change. */
  nodes: Pick<NodeRegistry, 'nodes' | 'get' | 'reload'>;
}

type Access = 'manage' | 'read' | 'none';

function requireNodeAdmin(principal: Principal): void {
  if (principal.kind !== 'user') throw forbidden('Compute nodes are managed by administrators; API keys cannot read or change them.');
  if (!isTenantAdmin(principal)) throw forbidden('Compute nodes need the tenant admin or platform admin role.');
}

function accessTo(principal: Principal, tenantIds: string[], source: NodeDefinition['source']): Access {
  if (isPlatformAdmin(principal)) return source === 'api' ? 'manage' : 'read';
  if (!serves(tenantIds, principal.tenantId)) return 'none';
  return ownedBy(tenantIds, principal.tenantId) && source === 'api' ? 'manage' : 'read';
}

export async function listNodes(deps: NodeDeps, principal: Principal): Promise<ComputeNode[]> {
  requireNodeAdmin(principal);
  const rows = isPlatformAdmin(principal)
    ? await computeNodeRepository.listAll(deps.db)
    : await computeNodeRepository.listServing(deps.db, principal.tenantId);
  return [
    ...configNodes(deps).map((d) => toView(deps, principal, d, d.apiKey !== undefined)),
    ...rows.map((row) => rowView(deps, principal, row)),
  ];
}

export async function getNode(deps: NodeDeps, principal: Principal, id: string): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const fixed = configNodes(deps).find((d) => d.id === id);
  if (fixed) return toView(deps, principal, fixed, fixed.apiKey !== undefined);
  return rowView(deps, principal, await visibleRow(deps, principal, id));
}

export async function createNode(deps: NodeDeps, principal: Principal, input: NewNode): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const tenantIds = await tenantIdsFor(deps, principal, input.tenantIds);
  const url = await checkNodeUrl(deps, principal, input.url);
  const row = await computeNodeRepository.insert(deps.db, {
    id: newId('computeNode'),
    name: input.name.trim(),
    engine: input.engine,
    url,
    api_key_encrypted: input.apiKey !== undefined ? deps.secrets.encrypt(input.apiKey) : null,
    tenant_ids: tenantIds,
    url_scope: urlScopeOf(principal),
    enabled: input.enabled ?? true,
    created_by: principal.subject,
  });
  await changed(deps, row.id);
  return rowView(deps, principal, row);
}

export async function updateNode(deps: NodeDeps, principal: Principal, id: string, patch: NodePatch): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const current = await manageableRow(deps, principal, id);
  const changes: ComputeNodeChanges = {};
  if (patch.name !== undefined) changes.name = patch.name.trim();
  if (patch.engine !== undefined) changes.engine = patch.engine;
  if (patch.url !== undefined) changes.url = { url: await checkNodeUrl(deps, principal, patch.url), urlScope: urlScopeOf(principal) };
  if (patch.apiKey !== undefined) changes.apiKeyEncrypted = patch.apiKey === null ? null : deps.secrets.encrypt(patch.apiKey);
  if (patch.tenantIds !== undefined) changes.tenantIds = await tenantIdsFor(deps, principal, patch.tenantIds);
  if (patch.enabled !== undefined) changes.enabled = patch.enabled;
  if (Object.keys(changes).length === 0) return rowView(deps, principal, current);
  const row = await computeNodeRepository.update(deps.db, id, changes);
  if (!row) throw notFound('Compute node');
  await changed(deps, id);
  return rowView(deps, principal, row);
}

export async function deleteNode(deps: NodeDeps, principal: Principal, id: string): Promise<void> {
  requireNodeAdmin(principal);
  await manageableRow(deps, principal, id);
  if (!(await computeNodeRepository.delete(deps.db, id))) throw notFound('Compute node');
  await changed(deps, id);
}

/** Tells every router (here through the bus at once, other replicas through theirs), then waits for this one's reload. */
async function changed(deps: NodeDeps, id: string): Promise<void> {
  await deps.bus.publish({ kind: 'computeNode', id });
  await deps.nodes.reload();
}

function configNodes(deps: NodeDeps): NodeDefinition[] {
  return deps.nodes
    .nodes()
    .filter((n) => n.definition.source === 'config')
    .map((n) => n.definition);
}

async function visibleRow(deps: NodeDeps, principal: Principal, id: string): Promise<ComputeNodeRow> {
  const row = isId('computeNode', id) ? await computeNodeRepository.get(deps.db, id) : undefined;
  if (!row || accessTo(principal, row.tenant_ids, 'api') === 'none') throw notFound('Compute node');
  return row;
}

async function manageableRow(deps: NodeDeps, principal: Principal, id: string): Promise<ComputeNodeRow> {
  if (configNodes(deps).some((d) => d.id === id)) {
    throw new AppError(
      'CONFLICT',
      'This compute node comes from the server configuration (GATEWAY_NODES or the built-in local engine) and cannot be changed through the API; change the configuration instead.',
    );
  }
  const row = await visibleRow(deps, principal, id);
  if (accessTo(principal, row.tenant_ids, 'api') !== 'manage')
    throw forbidden('This compute node is shared with other tenants; only a platform admin may change it.');
  return row;
}

async function tenantIdsFor(deps: NodeDeps, principal: Principal, requested: string[] | undefined): Promise<string[]> {
  if (!isPlatformAdmin(principal)) {
    if (requested === undefined || (requested.length === 1 && requested[0] === principal.tenantId)) return [principal.tenantId];
    throw forbidden("A tenant admin's compute nodes serve their own tenant only: omit tenantIds or give just your tenant's id.");
  }
  const ids = requested ?? [];
  const existing =
    ids.length > 0
      ? await computeNodeRepository.existingTenants(
          deps.db,
          ids.filter((id) => isId('tenant', id)),
        )
      : new Set<string>();
  const unknown = ids.filter((id) => !existing.has(id));
  if (unknown.length > 0) throw validation('tenantIds', `no such tenant: ${unknown.slice(0, 5).join(', ')}`);
  return ids;
}

async function checkNodeUrl(deps: NodeDeps, principal: Principal, raw: string): Promise<string> {
  const url = await checkCallerUrl(deps, principal, raw.trim());
  if (url.search || url.hash) throw validation('url', 'must not have a query or fragment: give the base URL of the engine');
  return url.toString().replace(/\/+$/, '');
}

function rowView(deps: NodeDeps, principal: Principal, row: ComputeNodeRow): ComputeNode {
  return toView(
    deps,
    principal,
    definitionFromRow({ ...row, api_key_encrypted: null }, deps.secrets, () => {}),
    row.api_key_encrypted !== null,
  );
}

function toView(deps: NodeDeps, principal: Principal, node: NodeDefinition, hasApiKey: boolean): ComputeNode {
  const access = accessTo(principal, node.tenantIds, node.source);
  const full = isPlatformAdmin(principal) || access === 'manage';
  const runtime = deps.nodes.get(node.id);
  const health: NodeHealth = runtime?.health() ?? { status: node.enabled ? 'unknown' : 'disabled', models: [], checkedAt: null };
  if (!full) delete health.lastError; // may name internal addresses
  return {
    id: node.id,
    name: node.name,
    engine: node.engine,
    ...(full && node.url !== undefined ? { url: displayUrl(node.url) } : {}),
    ...(full ? { tenantIds: node.tenantIds } : {}),
    enabled: node.enabled,
    hasApiKey,
    source: node.source,
    editable: access === 'manage',
    health,
    createdAt: node.createdAt.toISOString(),
    updatedAt: node.updatedAt.toISOString(),
  };
}

// Config URLs may carry credentials or tokens in the query: never shown.
function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return '';
  }
}
