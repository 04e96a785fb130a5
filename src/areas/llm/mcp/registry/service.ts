// MCP servers through the API. Who may do what (the compute nodes' model):
// - platform admin: every server; creates shared servers (tenantIds empty = every
//   tenant, read-only to them) or servers for named tenants.
// - tenant admin: creates and manages their own tenant's servers (tenantIds is always
//   [their tenant]); sees the shared servers serving it read-only, without url, auth,
//   tenantIds, error or pending changes. Any other server: 404.
// - members and API keys: 403 (servers are infrastructure; the tools they are granted
//   are what the MCP endpoint shows them).
// Names are unique among the servers any one tenant sees: a shared server's name is
// taken for every tenant, so a shared name may not repeat any server's, and a tenant's
// server may not take a shared server's name (checked under a lock: repository.ts).
import type { Database, Queryable } from '../../../../platform/db/database.js';
import type { Secrets } from '../../../../platform/secrets.js';
import { AppError, forbidden, notFound, validation } from '../../../../platform/errors.js';
import { isId, newId } from '../../../../platform/ids.js';
import { isPlatformAdmin, isTenantAdmin, type Principal } from '../../../../platform/identity.js';
import { ownedBy, serves } from '../../router/node-runtime.js';
import { checkCallerUrl, urlScopeOf, type UrlPolicyDeps } from '../../outbound/url-policy.js';
import type { McpCatalog } from './catalog.js';
import { encryptAuth, type StoredAuth } from './credentials.js';
import { mcpServerRepository, type McpServerChanges, type McpServerRow } from './repository.js';
import { RESERVED_SERVER_NAMES, type McpAuthInput, type McpServer, type McpServerPatch, type NewMcpServer } from './schemas.js';
import { serverView } from './view.js';
import type { StdioServers } from './stdio-servers.js';

export interface McpServerDeps extends UrlPolicyDeps {
  db: Database;
  /** Upstream secrets are stored encrypted. */
  secrets: Pick<Secrets, 'encrypt' | 'decrypt'>;
  /** Lists a server's tools when it is saved (so its status and pins are there at once: a late server shows `error`), and approves. */
  catalog: Pick<McpCatalog, 'refresh' | 'approve' | 'forget'>;
  /** The operator's stdio servers: listed read-only, never changed here, their names taken. */
  stdio?: Pick<StdioServers, 'servers' | 'serving' | 'byId' | 'view'>;
}

type Access = 'manage' | 'read' | 'none';

// Headers the transport owns, or that would change what the request means.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
  'expect',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
]);

export function requireServerAdmin(principal: Principal): void {
  if (principal.kind !== 'user') throw forbidden('MCP servers are managed by administrators; API keys cannot read or change them.');
  if (!isTenantAdmin(principal)) throw forbidden('MCP servers need the tenant admin or platform admin role.');
}

export function accessTo(principal: Principal, tenantIds: string[]): Access {
  if (isPlatformAdmin(principal)) return 'manage';
  if (!serves(tenantIds, principal.tenantId)) return 'none';
  return ownedBy(tenantIds, principal.tenantId) ? 'manage' : 'read';
}

export async function listServers(deps: McpServerDeps, principal: Principal): Promise<McpServer[]> {
  requireServerAdmin(principal);
  const rows = isPlatformAdmin(principal)
    ? await mcpServerRepository.listAll(deps.db)
    : await mcpServerRepository.listServing(deps.db, principal.tenantId);
  const configured = isPlatformAdmin(principal) ? (deps.stdio?.servers ?? []) : (deps.stdio?.serving(principal.tenantId) ?? []);
  return [...configured.map((s) => deps.stdio!.view(s, isPlatformAdmin(principal))), ...rows.map((row) => view(deps, principal, row))];
}

export async function getServer(deps: McpServerDeps, principal: Principal, id: string): Promise<McpServer> {
  requireServerAdmin(principal);
  const configured = deps.stdio?.byId(id);
  if (configured && (isPlatformAdmin(principal) || serves(configured.tenantIds, principal.tenantId)))
    return deps.stdio!.view(configured, isPlatformAdmin(principal));
  return view(deps, principal, await visibleRow(deps, principal, id));
}

export async function createServer(deps: McpServerDeps, principal: Principal, input: NewMcpServer): Promise<McpServer> {
  requireServerAdmin(principal);
  requireUsableName(input.name);
  requireNotConfigured(deps, input.name);
  const tenantIds = await tenantIdsFor(deps, principal, input.tenantIds);
  const url = await checkServerUrl(deps, principal, input.url, 'url');
  const auth = await storedAuth(deps, principal, input.auth ?? { type: 'none' });
  const row = await deps.db.tx(async (q) => {
    await mcpServerRepository.lockNames(q);
    await requireFreeName(q, input.name, tenantIds, null);
    return mcpServerRepository.insert(q, {
      id: newId('mcpServer'),
      name: input.name,
      url,
      url_scope: urlScopeOf(principal),
      auth,
      timeout_seconds: input.timeoutSeconds ?? 60,
      tenant_ids: tenantIds,
      created_by: principal.subject,
    });
  });
  return view(deps, principal, await listed(deps, principal, row));
}

export async function updateServer(deps: McpServerDeps, principal: Principal, id: string, patch: McpServerPatch): Promise<McpServer> {
  requireServerAdmin(principal);
  const current = await manageableRow(deps, principal, id);
  const changes: McpServerChanges = {};
  if (patch.name !== undefined) changes.name = requireNotConfigured(deps, requireUsableName(patch.name));
  if (patch.url !== undefined) changes.url = await checkServerUrl(deps, principal, patch.url, 'url');
  if (patch.auth !== undefined) changes.auth = await storedAuth(deps, principal, patch.auth);
  // Whoever gives a URL (the server's or the token endpoint's) sets whose deny list holds both.
  if (changes.url !== undefined || changes.auth !== undefined) {
    changes.urlScope = urlScopeOf(principal);
    if (changes.url === undefined) await checkServerUrl(deps, principal, current.url, 'url');
    if (changes.auth === undefined && current.auth.type === 'oauth2_client_credentials')
      await checkServerUrl(deps, principal, current.auth.tokenUrl, 'auth.tokenUrl');
  }
  if (patch.timeoutSeconds !== undefined) changes.timeoutSeconds = patch.timeoutSeconds;
  if (patch.tenantIds !== undefined) changes.tenantIds = await tenantIdsFor(deps, principal, patch.tenantIds);
  if (Object.keys(changes).length === 0) return view(deps, principal, current);
  const row = await deps.db.tx(async (q) => {
    if (changes.name !== undefined || changes.tenantIds !== undefined) {
      await mcpServerRepository.lockNames(q);
      await requireFreeName(q, changes.name ?? current.name, changes.tenantIds ?? current.tenant_ids, id);
    }
    return mcpServerRepository.update(q, id, changes);
  });
  if (!row) throw notFound('MCP server');
  deps.catalog.forget(id);
  const reconnect = changes.url !== undefined || changes.auth !== undefined;
  return view(deps, principal, reconnect ? await listed(deps, principal, row) : row);
}

export async function deleteServer(deps: McpServerDeps, principal: Principal, id: string): Promise<void> {
  requireServerAdmin(principal);
  await manageableRow(deps, principal, id);
  if (!(await mcpServerRepository.delete(deps.db, id))) throw notFound('MCP server');
  deps.catalog.forget(id);
}

/** Pins the pending listing (what GET showed as pendingChanges), or, with none, the upstream's listing now. */
export async function approveServer(deps: McpServerDeps, principal: Principal, id: string): Promise<McpServer> {
  requireServerAdmin(principal);
  const row = await manageableRow(deps, principal, id);
  const approved = await deps.catalog.approve(principal.tenantId, row);
  if (!approved) throw notFound('MCP server');
  deps.catalog.forget(id);
  return view(deps, principal, approved);
}

async function listed(deps: McpServerDeps, principal: Principal, row: McpServerRow): Promise<McpServerRow> {
  return (await deps.catalog.refresh(principal.tenantId, row)) ?? row;
}

async function visibleRow(deps: McpServerDeps, principal: Principal, id: string): Promise<McpServerRow> {
  const row = isId('mcpServer', id) ? await mcpServerRepository.get(deps.db, id) : undefined;
  if (!row || accessTo(principal, row.tenant_ids) === 'none') throw notFound('MCP server');
  return row;
}

async function manageableRow(deps: McpServerDeps, principal: Principal, id: string): Promise<McpServerRow> {
  const configured = deps.stdio?.byId(id);
  if (configured && (isPlatformAdmin(principal) || serves(configured.tenantIds, principal.tenantId)))
    throw new AppError(
      'CONFLICT',
      'This MCP server comes from the server configuration (GATEWAY_MCP_STDIO_SERVERS) and cannot be changed through the API; change the configuration instead.',
    );
  const row = await visibleRow(deps, principal, id);
  if (accessTo(principal, row.tenant_ids) !== 'manage')
    throw forbidden('This MCP server is shared with other tenants; only a platform admin may change it.');
  return row;
}

function requireUsableName(name: string): string {
  if (RESERVED_SERVER_NAMES.has(name))
    throw validation('name', `"${name}" is a path of the MCP API (/api/llm/v1/mcp/${name}); choose another name.`);
  return name;
}

/** A stdio server's name is taken for every tenant (a second server of that name would shadow its tools). */
function requireNotConfigured(deps: McpServerDeps, name: string): string {
  if (deps.stdio?.servers.some((s) => s.name === name))
    throw new AppError('CONFLICT', `An MCP server named "${name}" comes from the server configuration; choose another name.`);
  return name;
}

async function requireFreeName(q: Queryable, name: string, tenantIds: string[], id: string | null) {
  if (await mcpServerRepository.nameTaken(q, name, tenantIds, id))
    throw new AppError(
      'CONFLICT',
      tenantIds.length === 0
        ? `An MCP server named "${name}" already exists; a shared server's name must be unique among all servers.`
        : `An MCP server named "${name}" is already visible to this tenant; names are unique per tenant (shared servers included).`,
    );
}

async function tenantIdsFor(deps: McpServerDeps, principal: Principal, requested: string[] | undefined): Promise<string[]> {
  if (!isPlatformAdmin(principal)) {
    if (requested === undefined || (requested.length === 1 && requested[0] === principal.tenantId)) return [principal.tenantId];
    throw forbidden("A tenant admin's MCP servers serve their own tenant only: omit tenantIds or give just your tenant's id.");
  }
  const ids = requested ?? [];
  const wellFormed = ids.filter((id) => isId('tenant', id));
  const existing = wellFormed.length > 0 ? await mcpServerRepository.existingTenants(deps.db, wellFormed) : new Set<string>();
  const unknown = ids.filter((id) => !existing.has(id));
  if (unknown.length > 0) throw validation('tenantIds', `no such tenant: ${unknown.slice(0, 5).join(', ')}`);
  return ids;
}

/** The URL as stored: checked against the caller's deny list (400 naming `field` when refused), no fragment. */
async function checkServerUrl(deps: McpServerDeps, principal: Principal, raw: string, field: string): Promise<string> {
  let url: URL;
  try {
    url = await checkCallerUrl(deps, principal, raw.trim());
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION_FAILED') throw validation(field, error.detail.replace(/^url: /, ''));
    throw error;
  }
  if (url.hash) throw validation(field, 'must not have a fragment');
  return url.toString();
}

async function storedAuth(deps: McpServerDeps, principal: Principal, auth: McpAuthInput): Promise<StoredAuth> {
  if (auth.type === 'headers') {
    const reserved = Object.keys(auth.headers).find((name) => RESERVED_HEADERS.has(name.toLowerCase()));
    if (reserved) throw validation('auth.headers', `${reserved} is set by the gateway and cannot be configured`);
  }
  if (auth.type === 'oauth2_client_credentials') {
    const tokenUrl = await checkServerUrl(deps, principal, auth.tokenUrl, 'auth.tokenUrl');
    return encryptAuth(deps.secrets, { ...auth, tokenUrl });
  }
  return encryptAuth(deps.secrets, auth);
}

function view(deps: McpServerDeps, principal: Principal, row: McpServerRow): McpServer {
  return serverView(deps.secrets, row, accessTo(principal, row.tenant_ids) === 'manage');
}
