// /api/llm/v1/nodes: the compute nodes that serve models (see service.ts for who
// may see and change which). API keys of nodes are write-only: `hasApiKey` tells
// whether one is set, nothing returns it.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems, Text, Timestamp } from '../../schemas.js';
import { createNode, deleteNode, getNode, listNodes, updateNode } from './service.js';

const RemoteEngine = Type.Union([Type.Literal('openai'), Type.Literal('ollama')]);
const NodeHealth = Type.Object({
  status: Type.Union([Type.Literal('healthy'), Type.Literal('unhealthy'), Type.Literal('cooldown'), Type.Literal('disabled'), Type.Literal('unknown')]),
  models: Type.Array(Type.String()),
  checkedAt: Type.Union([Timestamp, Type.Null()]),
  lastError: Type.Optional(Type.String()),
});
const ComputeNode = Type.Object({
  id: Type.String(),
  name: Type.String(),
  engine: Type.Union([RemoteEngine, Type.Literal('local')]),
  url: Type.Optional(Type.String()),
  tenantIds: Type.Optional(Type.Array(Type.String())),
  enabled: Type.Boolean(),
  hasApiKey: Type.Boolean(),
  source: Type.Union([Type.Literal('config'), Type.Literal('api')]),
  editable: Type.Boolean(),
  health: NodeHealth,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const ApiKey = Type.String({ minLength: 1, maxLength: 4096 });
const TenantIds = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000, uniqueItems: true });
const Params = Type.Object({ nodeId: Type.String() });

export const nodeRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/nodes', { schema: { response: { 200: Type.Object({ data: Type.Array(ComputeNode) }), ...problems(401, 403) } } }, async (request) => ({
    data: await listNodes(ctx, principalOf(request)),
  }));

  app.post(
    '/nodes',
    {
      schema: {
        body: Type.Object({
          name: Text(200),
          engine: RemoteEngine,
          url: Url,
          apiKey: Type.Optional(ApiKey),
          tenantIds: Type.Optional(TenantIds),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 201: ComputeNode, ...problems(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(await createNode(ctx, principalOf(request), request.body)),
  );

  app.get('/nodes/:nodeId', { schema: { params: Params, response: { 200: ComputeNode, ...problems(401, 403, 404) } } }, async (request) =>
    getNode(ctx, principalOf(request), request.params.nodeId),
  );

  app.patch(
    '/nodes/:nodeId',
    {
      schema: {
        params: Params,
        body: Type.Object({
          name: Type.Optional(Text(200)),
          engine: Type.Optional(RemoteEngine),
          url: Type.Optional(Url),
          apiKey: Type.Optional(Type.Union([ApiKey, Type.Null()])),
          tenantIds: Type.Optional(TenantIds),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 200: ComputeNode, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => updateNode(ctx, principalOf(request), request.params.nodeId, request.body),
  );

  app.delete('/nodes/:nodeId', { schema: { params: Params, response: { 204: Type.Null(), ...problems(401, 403, 404, 409) } } }, async (request, reply) => {
    await deleteNode(ctx, principalOf(request), request.params.nodeId);
    return reply.code(204).send(null);
  });
};
