// Compute nodes through the API. Who may do what:
// - platform admin: every node; creates shared nodes (tenantIds empty = all tenants)
//   or nodes for named tenants; config nodes are read-only (409) for everyone.
// - tenant admin: creates and manages nodes of their own tenant (tenantIds is
//   always [their tenant]); also sees, read-only and without url, tenantIds or
//   errors, the shared nodes that serve their tenant. Any other node: 404.
// - members and API keys: 403, reads included (nodes are infrastructure; the
//   models list is what integrations read).
import type { AppContext } from '../../../context.js';
import { AppError, forbidden, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, isTenantAdmin, type Principal } from '../../../platform/identity.js';
import { ownedBy, serves, type NodeDefinition, type NodeHealth } from '../router/node-runtime.js';
import { computeNodeRepository, type ComputeNodeChanges, type ComputeNodeRow } from './repository.js';
import { definitionFromRow } from './definitions.js';
import { checkCallerUrl, urlScopeOf } from '../outbound/url-policy.js';

type RemoteEngine = 'openai' | 'ollama';

export interface ComputeNode {
  id: string;
  name: string;
  engine: NodeDefinition['engine'];
  /** Omitted for the local engine and in read-only views of shared nodes. */
  url?: string;
  /** Omitted in read-only views of shared nodes. */
  tenantIds?: string[];
  enabled: boolean;
  hasApiKey: boolean;
  source: NodeDefinition['source'];
  /** Whether the caller may change or delete it. */
  editable: boolean;
  health: NodeHealth;
  createdAt: string;
  updatedAt: string;
}

export interface NewNode {
  name: string;
  engine: RemoteEngine;
  url: string;
  apiKey?: string;
  tenantIds?: string[];
  enabled?: boolean;
}

export interface NodePatch {
  name?: string;
  engine?: RemoteEngine;
  url?: string;
  /** null removes the key. */
  apiKey?: string | null;
  tenantIds?: string[];
  enabled?: boolean;
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

export async function listNodes(ctx: AppContext, principal: Principal): Promise<ComputeNode[]> {
  requireNodeAdmin(principal);
  const rows = isPlatformAdmin(principal) ? await computeNodeRepository.listAll(ctx.db) : await computeNodeRepository.listServing(ctx.db, principal.tenantId);
  return [...configNodes(ctx).map((d) => toView(ctx, principal, d, d.apiKey !== undefined)), ...rows.map((row) => rowView(ctx, principal, row))];
}

export async function getNode(ctx: AppContext, principal: Principal, id: string): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const fixed = configNodes(ctx).find((d) => d.id === id);
  if (fixed) return toView(ctx, principal, fixed, fixed.apiKey !== undefined);
  return rowView(ctx, principal, await visibleRow(ctx, principal, id));
}

export async function createNode(ctx: AppContext, principal: Principal, input: NewNode): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const tenantIds = await tenantIdsFor(ctx, principal, input.tenantIds);
  const url = await checkNodeUrl(ctx, principal, input.url);
  const row = await computeNodeRepository.insert(ctx.db, {
    id: newId('computeNode'),
    name: input.name.trim(),
    engine: input.engine,
    url,
    api_key_encrypted: input.apiKey !== undefined ? ctx.secrets.encrypt(input.apiKey) : null,
    tenant_ids: tenantIds,
    url_scope: urlScopeOf(principal),
    enabled: input.enabled ?? true,
    created_by: principal.subject,
  });
  await changed(ctx, row.id);
  return rowView(ctx, principal, row);
}

export async function updateNode(ctx: AppContext, principal: Principal, id: string, patch: NodePatch): Promise<ComputeNode> {
  requireNodeAdmin(principal);
  const current = await manageableRow(ctx, principal, id);
  const changes: ComputeNodeChanges = {};
  if (patch.name !== undefined) changes.name = patch.name.trim();
  if (patch.engine !== undefined) changes.engine = patch.engine;
  if (patch.url !== undefined) changes.url = { url: await checkNodeUrl(ctx, principal, patch.url), urlScope: urlScopeOf(principal) };
  if (patch.apiKey !== undefined) changes.apiKeyEncrypted = patch.apiKey === null ? null : ctx.secrets.encrypt(patch.apiKey);
  if (patch.tenantIds !== undefined) changes.tenantIds = await tenantIdsFor(ctx, principal, patch.tenantIds);
  if (patch.enabled !== undefined) changes.enabled = patch.enabled;
  if (Object.keys(changes).length === 0) return rowView(ctx, principal, current);
  const row = await computeNodeRepository.update(ctx.db, id, changes);
  if (!row) throw notFound('Compute node');
  await changed(ctx, id);
  return rowView(ctx, principal, row);
}

export async function deleteNode(ctx: AppContext, principal: Principal, id: string): Promise<void> {
  requireNodeAdmin(principal);
  await manageableRow(ctx, principal, id);
  if (!(await computeNodeRepository.delete(ctx.db, id))) throw notFound('Compute node');
  await changed(ctx, id);
}

/** Tells every router (here through the bus at once, other replicas through theirs), then waits for this one's reload. */
async function changed(ctx: AppContext, id: string): Promise<void> {
  await ctx.bus.publish({ kind: 'computeNode', id });
  await ctx.llm.nodes.reload();
}

function configNodes(ctx: AppContext): NodeDefinition[] {
  return ctx.llm.nodes
    .nodes()
    .filter((n) => n.definition.source === 'config')
    .map((n) => n.definition);
}

async function visibleRow(ctx: AppContext, principal: Principal, id: string): Promise<ComputeNodeRow> {
  const row = isId('computeNode', id) ? await computeNodeRepository.get(ctx.db, id) : undefined;
  if (!row || accessTo(principal, row.tenant_ids, 'api') === 'none') throw notFound('Compute node');
  return row;
}

async function manageableRow(ctx: AppContext, principal: Principal, id: string): Promise<ComputeNodeRow> {
  if (configNodes(ctx).some((d) => d.id === id)) {
    throw new AppError('CONFLICT', 'This compute node comes from the server configuration (GATEWAY_NODES or the built-in local engine) and cannot be changed through the API; change the configuration instead.');
  }
  const row = await visibleRow(ctx, principal, id);
  if (accessTo(principal, row.tenant_ids, 'api') !== 'manage') throw forbidden('This compute node is shared with other tenants; only a platform admin may change it.');
  return row;
}

async function tenantIdsFor(ctx: AppContext, principal: Principal, requested: string[] | undefined): Promise<string[]> {
  if (!isPlatformAdmin(principal)) {
    if (requested === undefined || (requested.length === 1 && requested[0] === principal.tenantId)) return [principal.tenantId];
    throw forbidden("A tenant admin's compute nodes serve their own tenant only: omit tenantIds or give just your tenant's id.");
  }
  const ids = requested ?? [];
  const existing = ids.length > 0 ? await computeNodeRepository.existingTenants(ctx.db, ids.filter((id) => isId('tenant', id))) : new Set<string>();
  const unknown = ids.filter((id) => !existing.has(id));
  if (unknown.length > 0) throw validation('tenantIds', `no such tenant: ${unknown.slice(0, 5).join(', ')}`);
  return ids;
}

async function checkNodeUrl(ctx: AppContext, principal: Principal, raw: string): Promise<string> {
  const url = await checkCallerUrl(ctx.llm, principal, raw.trim());
  if (url.search || url.hash) throw validation('url', 'must not have a query or fragment: give the base URL of the engine');
  return url.toString().replace(/\/+$/, '');
}

function rowView(ctx: AppContext, principal: Principal, row: ComputeNodeRow): ComputeNode {
  return toView(ctx, principal, definitionFromRow({ ...row, api_key_encrypted: null }, ctx.secrets, () => {}), row.api_key_encrypted !== null);
}

function toView(ctx: AppContext, principal: Principal, node: NodeDefinition, hasApiKey: boolean): ComputeNode {
  const access = accessTo(principal, node.tenantIds, node.source);
  const full = isPlatformAdmin(principal) || access === 'manage';
  const runtime = ctx.llm.nodes.get(node.id);
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
