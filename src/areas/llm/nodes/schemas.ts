// The compute-node record and the request shapes of /api/llm/v1/nodes; the
// TypeScript types are derived from them, so the two can never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';

/** The engines a node added through the API can run (the local engine comes from the configuration only). */
export const RemoteEngine = Type.Union([Type.Literal('openai'), Type.Literal('ollama')]);
export type RemoteEngine = Static<typeof RemoteEngine>;

/**
 * The router's view of the node (router/node-runtime.ts), as the API shows it. `empty`:
 * the node answers its probes but lists no model, so it serves nothing yet.
 */
export const NodeHealth = Type.Object({
  status: Type.Union([
    Type.Literal('healthy'),
    Type.Literal('empty'),
    Type.Literal('unhealthy'),
    Type.Literal('cooldown'),
    Type.Literal('disabled'),
    Type.Literal('unknown'),
  ]),
  models: Type.Array(Type.String()),
  checkedAt: Type.Union([Timestamp, Type.Null()]),
  lastError: Type.Optional(Type.String()),
});
export type NodeHealth = Static<typeof NodeHealth>;

export const ComputeNode = Type.Object({
  id: Type.String(),
  name: Type.String(),
  engine: Type.Union([RemoteEngine, Type.Literal('local')]),
  /** Omitted for the local engine and in read-only views of shared nodes. */
  url: Type.Optional(Type.String()),
  /** Omitted in read-only views of shared nodes. */
  tenantIds: Type.Optional(Type.Array(Type.String())),
  enabled: Type.Boolean(),
  hasApiKey: Type.Boolean(),
  source: Type.Union([Type.Literal('config'), Type.Literal('api')]),
  /** Whether the caller may change or delete it. */
  editable: Type.Boolean(),
  health: NodeHealth,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ComputeNode = Static<typeof ComputeNode>;

const Url = Type.String({ minLength: 1, maxLength: 2000 });
const ApiKey = Type.String({ minLength: 1, maxLength: 4096 });
const TenantIds = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000, uniqueItems: true });

export const NodeParams = Type.Object({ nodeId: Type.String() });

export const NewNode = Type.Object({
  name: Text(200),
  engine: RemoteEngine,
  url: Url,
  apiKey: Type.Optional(ApiKey),
  tenantIds: Type.Optional(TenantIds),
  enabled: Type.Optional(Type.Boolean()),
});
export type NewNode = Static<typeof NewNode>;

export const NodePatch = Type.Object({
  name: Type.Optional(Text(200)),
  engine: Type.Optional(RemoteEngine),
  url: Type.Optional(Url),
  /** null removes the key. */
  apiKey: Type.Optional(Type.Union([ApiKey, Type.Null()])),
  tenantIds: Type.Optional(TenantIds),
  enabled: Type.Optional(Type.Boolean()),
});
export type NodePatch = Static<typeof NodePatch>;
