// The authorization matrix that route-security.test.ts generates from the route table:
// what each declared access level means for each caller of the world (seedWorld), the
// records of tenant A that a route's path parameters point at, and a minimal body that
// passes a route's schema, so that the answer is the service's decision about the
// caller, not a 400 about the input.
import type { RouteAccess, RouteSummary } from '../../src/gateway/fastify-types.js';
import { seedUser, type TestGateway } from '../helpers/gateway.js';
import { newId } from '../../src/platform/ids.js';
import { conversationRepository, itemRepository } from '../../src/areas/llm/history/repository.js';
import { runRepository } from '../../src/areas/llm/runs/repository.js';
import { refreshTokenRepository } from '../../src/areas/auth/sessions/repository.js';
import { stepIdOf } from '../../src/areas/llm/thread-runs/objects.js';
import type { World } from '../helpers/world.js';
import { createApiKey } from './support.js';
import { issueScimToken } from '../../src/areas/auth/scim-tokens/service.js';
import { SCHEMA } from '../../src/areas/auth/scim/protocol.js';

export type Caller = 'member' | 'apiKey' | 'admin' | 'platformAdmin' | 'otherAdmin' | 'otherApiKey' | 'scimToken' | 'otherScimToken';
/** `allowed`: anything but 401, 403 and 404 (a 400 for the minimal body is fine); or the refusal's status. */
export type Outcome = 'allowed' | 401 | 403 | 404 | 500;

/**
 * Each level, caller by caller, acting on tenant A's records: tenant A's member, API key
 * and admin; the platform admin (in a tenant of their own); tenant B's admin and key.
 * A 404 stands for "another tenant's ids": it is checked only on routes whose path
 * carries tenant A's ids; on others the caller acts on their own tenant. A caller not
 * listed for a level is not checked there (the platform admin on a tenant's own data
 * is just another tenant's caller). A SCIM token is a credential of the SCIM routes
 * alone: 401 everywhere else, and nothing else is one there (401).
 */
export const RULES: Record<Exclude<RouteAccess, 'public'>, Partial<Record<Caller, Outcome>>> = {
  signedIn: { member: 'allowed', apiKey: 403, admin: 'allowed', platformAdmin: 'allowed', scimToken: 401 },
  tenant: { member: 'allowed', apiKey: 'allowed', admin: 'allowed', otherAdmin: 404, otherApiKey: 404, scimToken: 401 },
  tenantEditor: { member: 403, apiKey: 'allowed', admin: 'allowed', otherAdmin: 404, otherApiKey: 404, scimToken: 401 },
  tenantAdmin: { member: 403, apiKey: 403, admin: 'allowed', platformAdmin: 'allowed', otherAdmin: 404, scimToken: 401 },
  platformAdmin: { member: 403, apiKey: 403, admin: 403, otherAdmin: 403, platformAdmin: 'allowed', scimToken: 401 },
  // Records made by tenant A's member: the admin of the same tenant gets 404 too.
  personal: { member: 'allowed', apiKey: 403, admin: 404, otherAdmin: 404, otherApiKey: 403, scimToken: 401 },
  // Records made by tenant A's API key: shared by the tenant's keys, nobody else's.
  owner: { apiKey: 'allowed', member: 404, admin: 404, otherAdmin: 404, otherApiKey: 404, scimToken: 401 },
  // Tenant A's provisioned users and groups: its SCIM token only; tenant B's token gets 404 for them.
  scim: {
    scimToken: 'allowed',
    otherScimToken: 404,
    member: 401,
    apiKey: 401,
    admin: 401,
    platformAdmin: 401,
    otherAdmin: 401,
    otherApiKey: 401,
  },
};

/** Routes whose answer to a caller differs from their level's rule, by the spec. */
export const EXCEPTIONS: Record<string, Partial<Record<Caller, Outcome>>> = {
  // Spec rule 3: a credential with a tenant but no user gets 500 (not 403) on `chat`.
  'POST /api/llm/v1/chat': { apiKey: 500, otherApiKey: 500 },
};

export function credentialOf(world: World, caller: Caller): Record<string, string> {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  switch (caller) {
    case 'member':
      return bearer(world.a.member.token);
    case 'apiKey':
      return { 'x-api-key': world.a.key.key };
    case 'admin':
      return bearer(world.a.admin.token);
    case 'platformAdmin':
      return bearer(world.platform.admin.token);
    case 'otherAdmin':
      return bearer(world.b.admin.token);
    case 'otherApiKey':
      return { 'x-api-key': world.b.key.key };
    case 'scimToken':
      return bearer(world.a.scimToken);
    case 'otherScimToken':
      return bearer(world.b.scimToken);
  }
}

/** Path parameters that are not ids of a record, with the value that reaches the route's service. */
const PLAIN_PARAMS: Record<string, string> = {
  // An engine that pulls (other names are 404 before anyone is asked who calls).
  engine: 'local',
  // The MCP endpoint's one-server route takes a server's name; an unknown one is a server with no tools (not a 404).
  serverName: 'matrix-tools',
  // The SCIM discovery documents: names, the same for every tenant.
  resourceTypeId: 'User',
  schemaId: 'urn:ietf:params:scim:schemas:core:2.0:User',
};

/** What a wildcard (`*`, the rest of the path) stands for, by route path (GET and its HEAD): names, not ids of a record. */
const WILDCARDS: Record<string, string> = {
  // A model id (which may hold slashes): the one the matrix's shared node serves.
  '/api/llm/v1/models/*': 'fake-model',
};

/**
 * The records of tenant A that path parameters name. A read gets the shared record; a
 * write gets one of its own, so that a DELETE or a revoke that goes through (rightly,
 * or because a declaration is wrong) takes nothing away from the world.
 */
export class TenantARecords {
  private shared = new Map<string, string>();
  private seq = 0;

  constructor(
    private gw: TestGateway,
    private world: World,
    /** A loopback address nobody listens on, for compute nodes. */
    private closedUrl: string,
  ) {}

  /** Whether the route's path names anything of tenant A. */
  static carriesIds(route: RouteSummary): boolean {
    return paramsOf(route.url).some((name) => !(name in PLAIN_PARAMS));
  }

  async path(route: RouteSummary): Promise<string> {
    const fresh = route.method !== 'GET' && route.method !== 'HEAD';
    let path = route.url.replace('*', () => WILDCARDS[route.url] ?? '*');
    // A later id lives inside an earlier one (a thread's message): each is made in the one chosen before it.
    const chosen = new Map<string, string>();
    for (const name of paramsOf(route.url)) {
      const id = await this.value(name, fresh, route, chosen);
      chosen.set(name, id);
      path = path.replace(`:${name}`, id);
    }
    return path;
  }

  /** The shared record named `name` (made on first use): for bodies that name records, e.g. a run's assistant_id. */
  sharedId(name: string, route: RouteSummary): Promise<string> {
    return this.value(name, false, route, new Map());
  }

  private async value(name: string, fresh: boolean, route: RouteSummary, chosen: Map<string, string>): Promise<string> {
    if (name in PLAIN_PARAMS) return PLAIN_PARAMS[name]!;
    if (name === 'tenantId') return this.world.a.tenantId;
    // Shared only when everything before it in the path is shared too.
    const key = `${name} in ${[...chosen.values()].join('/')}`;
    if (!fresh && this.shared.has(key)) return this.shared.get(key)!;
    const id = await this.create(name, route, chosen);
    if (!fresh) this.shared.set(key, id);
    return id;
  }

  private async create(name: string, route: RouteSummary, chosen: Map<string, string>): Promise<string> {
    const label = `matrix ${++this.seq}`;
    switch (name) {
      case 'userId':
        return (await seedUser(this.gw, this.world.a.tenantId)).id;
      case 'keyId':
        return (await createApiKey(this.gw, this.world.a.tenantId, label)).id;
      case 'scimTokenId':
        return (await issueScimToken(this.gw.ctx, this.world.a.tenantId, { name: label }, null)).id;
      // A user and a group tenant A's SCIM client provisioned.
      case 'scimUserId':
        return (await this.scim('users', { schemas: [SCHEMA.user], userName: `matrix-${newId('user').slice(-10)}@example.test` })).id;
      case 'scimGroupId':
        return (await this.scim('groups', { schemas: [SCHEMA.group], displayName: `matrix ${newId('scimGroup').slice(-10)}` })).id;
      case 'workspaceId':
        return this.created('/api/os/workspaces', { apiKey: this.world.a.key.key, json: { name: label } });
      case 'collectionId':
        return this.created(`/api/os/workspaces/${await this.value('workspaceId', true, route, new Map())}/collections`, {
          apiKey: this.world.a.key.key,
          json: { name: label },
        });
      case 'documentId':
        return this.created(`/api/os/collections/${await this.value('collectionId', true, route, new Map())}/documents`, {
          apiKey: this.world.a.key.key,
          json: { name: `${label}.txt`, text: label },
        });
      // The platform-kept history (llm/history): a conversation is the member's, a thread,
      // an assistant and a run are the tenant's API keys' (their owner rule, llm/history/owner.ts).
      case 'conversationId':
        return this.conversation('chat', this.world.a.member.id);
      case 'threadId':
        return this.conversation('thread', 'keys');
      case 'assistantId': {
        const id = newId('assistant');
        await this.gw.ctx.db.query("INSERT INTO assistants (id, tenant_id, owner, model) VALUES ($1, $2, 'keys', 'matrix-model')", [
          id,
          this.world.a.tenantId,
        ]);
        return id;
      }
      case 'messageId':
        return (await this.item(chosen.get('threadId') ?? chosen.get('conversationId')!)).id;
      case 'runId': {
        const threadId = chosen.get('threadId')!;
        const run = await runRepository.insert(this.gw.ctx.db, {
          id: newId('run'),
          tenant_id: this.world.a.tenantId,
          conversation_id: threadId,
          owner: 'keys',
          model: 'matrix-model',
        });
        const item = await this.item(threadId, run.id);
        await runRepository.setMessage(this.gw.ctx.db, run.id, item.id);
        return run.id;
      }
      case 'stepId':
        return stepIdOf(chosen.get('runId')!);
      case 'responseId': {
        // A response is a run (resp_…) in a conversation of its own, made by the tenant's keys.
        const conversation = await conversationRepository.insert(this.gw.ctx.db, {
          id: newId('conversation'),
          tenant_id: this.world.a.tenantId,
          owner: 'keys',
          surface: 'response',
        });
        const run = await runRepository.insert(this.gw.ctx.db, {
          id: newId('response'),
          tenant_id: this.world.a.tenantId,
          conversation_id: conversation.id,
          owner: 'keys',
          model: 'matrix-model',
        });
        await this.item(conversation.id);
        const item = await this.item(conversation.id, run.id);
        await runRepository.setMessage(this.gw.ctx.db, run.id, item.id);
        await runRepository.finish(this.gw.ctx.db, run.id, { status: 'completed' });
        return run.id;
      }
      // A signed-in session (a refresh-token family) of tenant A's member: theirs alone to end.
      case 'sessionId': {
        const familyId = newId('tokenFamily');
        await refreshTokenRepository.insert(this.gw.ctx.db, {
          id: newId('refreshToken'),
          family_id: familyId,
          user_id: this.world.a.member.id,
          token_hash: `matrix-${familyId}`,
          expires_at: new Date(Date.now() + 86_400_000),
        });
        return familyId;
      }
      case 'nodeId':
        return this.created('/api/llm/v1/nodes', {
          token: this.world.platform.admin.token,
          json: { name: label, engine: 'openai', url: this.closedUrl, tenantIds: [this.world.a.tenantId] },
        });
      // An MCP server of tenant A alone (its admin manages it), at an address nobody listens on.
      case 'serverId':
        return this.created('/api/llm/v1/mcp/servers', {
          token: this.world.platform.admin.token,
          json: { name: `matrix-${++this.seq}`, url: this.closedUrl, tenantIds: [this.world.a.tenantId] },
        });
      // An SSO connection of tenant A, its issuer at an address nobody listens on (a platform admin's, so loopback is allowed).
      case 'connectionId':
        return this.created(`/api/auth/tenants/${this.world.a.tenantId}/sso/connections`, {
          token: this.world.platform.admin.token,
          json: { name: label, issuer: this.closedUrl.replace(/^http:/, 'https:'), clientId: 'matrix', clientSecret: 'matrix-secret' },
        });
      default:
        throw new Error(
          `${route.method} ${route.url}: the route-security matrix has no record for :${name}. Teach TenantARecords (test/gateway/access-matrix.ts) ` +
            'to create one in tenant A, or list it in PLAIN_PARAMS if it is not an id.',
        );
    }
  }

  private async scim(resource: 'users' | 'groups', json: object): Promise<{ id: string }> {
    const response = await this.gw.request('POST', `/api/auth/scim/v2/${resource}`, { token: this.world.a.scimToken, json });
    if (response.status !== 201) throw new Error(`could not provision a SCIM ${resource} record: ${response.status} ${response.text}`);
    return response.body;
  }

  private async conversation(surface: 'chat' | 'thread', owner: string): Promise<string> {
    const row = await conversationRepository.insert(this.gw.ctx.db, {
      id: newId(surface === 'chat' ? 'conversation' : 'thread'),
      tenant_id: this.world.a.tenantId,
      owner,
      surface,
      title: `matrix ${++this.seq}`,
    });
    return row.id;
  }

  private item(conversationId: string, runId?: string) {
    return itemRepository.append(this.gw.ctx.db, {
      id: newId('message'),
      conversation_id: conversationId,
      tenant_id: this.world.a.tenantId,
      role: runId ? 'assistant' : 'user',
      content: 'matrix',
      status: 'completed',
      ...(runId ? { run_id: runId } : {}),
    });
  }

  private async created(path: string, options: Parameters<TestGateway['request']>[2]): Promise<string> {
    const response = await this.gw.request('POST', path, options);
    // 202: a document, stored and queued for ingestion.
    if (response.status !== 201 && response.status !== 202)
      throw new Error(`could not create a record at ${path}: ${response.status} ${response.text}`);
    return response.body.id;
  }
}

function paramsOf(url: string): string[] {
  return [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
}

/**
 * Bodies for routes whose service checks the input before the caller, so that the
 * generated one would get a 400 where the matrix expects the caller's refusal.
 */
const BODIES: Record<string, unknown> = {
  // Exactly one of `code` and `password`, or a 400 before the caller is looked at.
  'POST /api/auth/2fa/disable': { password: 'not the password' },
};

/** Bodies naming one of tenant A's records: the route looks at the record (404 for a caller not its owner's) before the caller. */
const BODIES_WITH_RECORDS: Record<string, (records: TenantARecords, route: RouteSummary) => Promise<unknown>> = {
  'POST /api/llm/v1/threads/:threadId/runs': async (r, route) => ({ assistant_id: await r.sharedId('assistantId', route) }),
  'POST /api/llm/v1/threads/:threadId/runs/stream': async (r, route) => ({ assistant_id: await r.sharedId('assistantId', route) }),
  'POST /api/llm/v1/threads/runs': async (r, route) => ({ assistant_id: await r.sharedId('assistantId', route) }),
};

/** The body for a route, naming tenant A's records where the route needs one. */
export async function bodyWithRecords(route: RouteSummary, records: TenantARecords): Promise<unknown> {
  const make = BODIES_WITH_RECORDS[`${route.method} ${route.url}`];
  return make ? make(records, route) : bodyFor(route);
}

type Schema = { [keyword: string]: any };
let seq = 0;

/** The body to send: none for routes without a body schema, else the smallest that passes it. */
export function bodyFor(route: RouteSummary): unknown {
  const key = `${route.method} ${route.url}`;
  if (key in BODIES) return BODIES[key];
  const schema = route.schema.body as Schema | undefined;
  return schema && ['POST', 'PUT', 'PATCH'].includes(route.method) ? minimalValue(schema) : undefined;
}

/** Required fields only, each with a plain value: unique letters and digits, a future date, the first choice. */
function minimalValue(schema: Schema): unknown {
  if ('const' in schema) return schema.const;
  if (schema.anyOf) return minimalValue(schema.anyOf.find((branch: Schema) => branch.type !== 'null') ?? schema.anyOf[0]);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = minimalValue(schema.properties[name]);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => minimalValue(schema.items ?? {}));
    case 'string':
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      return `access${++seq}`.padEnd(schema.minLength ?? 0, 'x');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
