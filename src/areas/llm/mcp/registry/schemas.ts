// The MCP server record and the request shapes of /api/llm/v1/mcp/servers; the
// TypeScript types are derived from them, so the two can never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../../schemas.js';

const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Secret = Type.String({ minLength: 1, maxLength: 8192 });
// An HTTP header name (RFC 9110 token); the values may not hold line breaks.
const HeaderName = Type.String({ minLength: 1, maxLength: 100, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" });
const HeaderValue = Type.String({ minLength: 1, maxLength: 8192, pattern: '^[^\\r\\n\\x00]*$' });

/** The server's name: the prefix of its tools, unique among the servers a tenant sees. */
export const ServerName = Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: 'lowercase letters, digits and dashes, 1 to 32' });

/**
 * The static paths under /api/llm/v1/mcp/: a server of one of these names could not be
 * reached at /api/llm/v1/mcp/{serverName} (the static route wins), so none may take them.
 */
export const RESERVED_SERVER_NAMES: ReadonlySet<string> = new Set(['servers', 'calls']);

/** The credential the gateway sends upstream, as given (secrets in clear: only ever in a request body). */
export const McpAuthInput = Type.Union([
  Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('bearer'), token: Secret }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('headers'),
      headers: Type.Record(HeaderName, HeaderValue, { minProperties: 1, maxProperties: 20 }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('oauth2_client_credentials'),
      tokenUrl: Url,
      clientId: Type.String({ minLength: 1, maxLength: 1000 }),
      clientSecret: Secret,
      scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    },
    { additionalProperties: false },
  ),
]);
export type McpAuthInput = Static<typeof McpAuthInput>;

/** The same credential as the API shows it: every secret masked (the last four characters of long ones). */
export const McpAuthView = Type.Union([
  Type.Object({ type: Type.Literal('none') }),
  Type.Object({ type: Type.Literal('bearer'), token: Type.String() }),
  Type.Object({ type: Type.Literal('headers'), headers: Type.Record(Type.String(), Type.String()) }),
  Type.Object({
    type: Type.Literal('oauth2_client_credentials'),
    tokenUrl: Type.String(),
    clientId: Type.String(),
    clientSecret: Type.String(),
    scope: Type.Optional(Type.String()),
  }),
]);
export type McpAuthView = Static<typeof McpAuthView>;

export const StatusState = Type.Union([
  Type.Literal('unknown'),
  Type.Literal('ok'),
  Type.Literal('changed'),
  Type.Literal('empty'),
  Type.Literal('error'),
]);
export type StatusState = Static<typeof StatusState>;

/** One tool as pinned or listed: its definition and the SHA-256 of what a model sees of it. */
export const PinnedToolView = Type.Object({
  name: Type.String(),
  sha256: Type.String(),
  definition: Type.Record(Type.String(), Type.Unknown()),
});

export const McpServer = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** `api`: registered through this API; `config`: a stdio server of GATEWAY_MCP_STDIO_SERVERS, read-only to everyone. */
  source: Type.Union([Type.Literal('api'), Type.Literal('config')]),
  /** Omitted in read-only views of shared servers. */
  url: Type.Optional(Type.String()),
  /** Omitted in read-only views of shared servers. */
  auth: Type.Optional(McpAuthView),
  /** Omitted in read-only views of shared servers. */
  tenantIds: Type.Optional(Type.Array(Type.String())),
  timeoutSeconds: Type.Integer(),
  /** Whether the caller may change, approve or delete it. */
  editable: Type.Boolean(),
  status: Type.Object({
    state: StatusState,
    /** The names of the tools served (the pinned ones). */
    tools: Type.Array(Type.String()),
    checkedAt: Type.Union([Timestamp, Type.Null()]),
    /** Omitted in read-only views (it may name internal addresses). */
    error: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
  /** The tools served, as first listed or last approved. */
  pinnedTools: Type.Array(PinnedToolView),
  /** When the upstream lists something else: what `approve` would pin. Omitted in read-only views. */
  pendingChanges: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        added: Type.Array(PinnedToolView),
        changed: Type.Array(PinnedToolView),
        removed: Type.Array(Type.String()),
      }),
    ]),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type McpServer = Static<typeof McpServer>;

const TenantIds = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000, uniqueItems: true });
const TimeoutSeconds = Type.Integer({ minimum: 1, maximum: 3600 });

export const ServerParams = Type.Object({ serverId: Type.String() });

export const NewMcpServer = Type.Object(
  {
    name: ServerName,
    url: Url,
    auth: Type.Optional(McpAuthInput),
    timeoutSeconds: Type.Optional(TimeoutSeconds),
    tenantIds: Type.Optional(TenantIds),
  },
  { additionalProperties: false },
);
export type NewMcpServer = Static<typeof NewMcpServer>;

/** A PATCH changes only what it names; `auth` is replaced whole (its secrets given again). */
export const McpServerPatch = Type.Object(
  {
    name: Type.Optional(ServerName),
    url: Type.Optional(Url),
    auth: Type.Optional(McpAuthInput),
    timeoutSeconds: Type.Optional(TimeoutSeconds),
    tenantIds: Type.Optional(TenantIds),
  },
  { additionalProperties: false },
);
export type McpServerPatch = Static<typeof McpServerPatch>;
