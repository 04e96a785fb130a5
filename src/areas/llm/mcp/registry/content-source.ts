// Prompts and resources of the registry's servers, for RegistryToolSource (tool-source.ts),
// through the same reach as tools. A prompt is granted like a tool: `server/*` or
// `server/{prompt}`. Resources and resource templates only with the whole server
// (`server/*`): a read names a URI, which a per-name grant could not bound. Neither is
// pinned (pinning holds tool definitions, which a model acts on unseen); both are listed
// upstream at each request, and only from servers that declare the capability. A server
// whose listing fails lists nothing (the others still answer).
import type { ReadResourceResult, Resource, ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/client';
import { serves } from '../../router/node-runtime.js';
import type { Principal } from '../../../../platform/identity.js';
import { ToolCallFailed, type GrantedPrompt, type GrantedResource } from '../tool-source.js';
import type { McpCatalog } from './catalog.js';
import { mcpServerRepository, type McpServerRow } from './repository.js';
import { reaches, type Reach, type RegistryToolSourceDeps } from './tool-source.js';

type Deps = Pick<RegistryToolSourceDeps, 'db'> & { catalog: Pick<McpCatalog, 'read'> };

// Pages followed per listing: a server paging past this is cut off rather than held on to.
const MAX_PAGES = 20;
// A listing request never outlives this, whatever the server's own timeout.
const listingSignal = () => AbortSignal.timeout(20_000);

export async function listPrompts(deps: Deps, reach: Reach, principal: Principal, server?: string): Promise<GrantedPrompt[]> {
  const rows = await servingRows(deps, principal, server, (row) => reach === 'every' || reach.some((p) => p.startsWith(`${row.name}/`)));
  const perServer = await Promise.all(
    rows.map(async (row) => {
      const prompts = await listed(deps, principal, row, 'prompts', (client, options) =>
        pages((cursor) => client.listPrompts(cursor ? { cursor } : undefined, options).then((r) => [r.prompts, r.nextCursor] as const)),
      );
      return prompts
        .filter((prompt) => reaches(reach, row.name, prompt.name))
        .map((prompt): GrantedPrompt => ({ serverId: row.id, server: row.name, name: prompt.name, definition: prompt }));
    }),
  );
  return perServer.flat();
}

/** Re-checked here, as a tool call is: the server still serves the tenant and the prompt is still granted. */
export async function getPrompt(
  deps: Deps,
  reach: Reach,
  principal: Principal,
  prompt: GrantedPrompt,
  args: Record<string, string>,
  signal: AbortSignal,
) {
  const row = await mcpServerRepository.get(deps.db, prompt.serverId);
  if (!row || !serves(row.tenant_ids, principal.tenantId) || !reaches(reach, row.name, prompt.name))
    throw new ToolCallFailed('denied', `Unknown prompt: ${prompt.server}/${prompt.name}`, -32602);
  return deps.catalog.read(principal.tenantId, row, signal, (client, options) =>
    client.getPrompt({ name: prompt.name, arguments: args }, options),
  );
}

export async function listResources(deps: Deps, reach: Reach, principal: Principal, server?: string): Promise<GrantedResource[]> {
  const rows = await servingRows(deps, principal, server, (row) => wholeServer(reach, row));
  const perServer = await Promise.all(
    rows.map(async (row) =>
      (
        await listed(deps, principal, row, 'resources', (client, options) =>
          pages((cursor) =>
            client.listResources(cursor ? { cursor } : undefined, options).then((r) => [r.resources, r.nextCursor] as const),
          ),
        )
      ).map((definition): GrantedResource<Resource> => ({ serverId: row.id, server: row.name, definition })),
    ),
  );
  return perServer.flat();
}

export async function listResourceTemplates(
  deps: Deps,
  reach: Reach,
  principal: Principal,
  server?: string,
): Promise<GrantedResource<ResourceTemplate>[]> {
  const rows = await servingRows(deps, principal, server, (row) => wholeServer(reach, row));
  const perServer = await Promise.all(
    rows.map(async (row) =>
      (
        await listed(deps, principal, row, 'resources', (client, options) =>
          pages((cursor) =>
            client
              .listResourceTemplates(cursor ? { cursor } : undefined, options)
              .then((r) => [r.resourceTemplates, r.nextCursor] as const),
          ),
        )
      ).map((definition): GrantedResource<ResourceTemplate> => ({ serverId: row.id, server: row.name, definition })),
    ),
  );
  return perServer.flat();
}

/** Reads `uri` from the server named `server`; the upstream decides whether it exists (its error passes through). */
export async function readResource(
  deps: Deps,
  reach: Reach,
  principal: Principal,
  server: string,
  uri: string,
  signal: AbortSignal,
): Promise<ReadResourceResult> {
  const [row] = await servingRows(deps, principal, server, (row) => wholeServer(reach, row));
  if (!row) throw new ToolCallFailed('denied', `Resource not found: ${uri}`, -32602);
  return deps.catalog.read(principal.tenantId, row, signal, (client, options) => client.readResource({ uri }, options));
}

const wholeServer = (reach: Reach, row: McpServerRow) => reach === 'every' || reach.includes(`${row.name}/*`);

async function servingRows(deps: Deps, principal: Principal, server: string | undefined, granted: (row: McpServerRow) => boolean) {
  return (await mcpServerRepository.listServing(deps.db, principal.tenantId)).filter(
    (row) => (server === undefined || row.name === server) && granted(row),
  );
}

/** A listing from one server that declares `capability`; nothing when it does not, or when it fails. */
async function listed<T>(
  deps: Deps,
  principal: Principal,
  row: McpServerRow,
  capability: 'prompts' | 'resources',
  list: (client: Parameters<Parameters<McpCatalog['read']>[3]>[0], options: { timeout: number; signal: AbortSignal }) => Promise<T[]>,
): Promise<T[]> {
  try {
    return await deps.catalog.read(principal.tenantId, row, listingSignal(), (client, options) =>
      client.getServerCapabilities()?.[capability] ? list(client, options) : Promise.resolve([]),
    );
  } catch {
    return [];
  }
}

async function pages<T>(page: (cursor: string | undefined) => Promise<readonly [T[], string | undefined]>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const [items, next] = await page(cursor);
    all.push(...items);
    if (!next) break;
    cursor = next;
  }
  return all;
}
