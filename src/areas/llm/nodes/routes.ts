// /api/llm/v1/nodes: the compute nodes that serve models (see service.ts for who
// may see and change which). API keys of nodes are write-only: `hasApiKey` tells
// whether one is set, nothing returns it.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ComputeNode, NewNode, NodeParams, NodePatch } from './schemas.js';
import { createNode, deleteNode, getNode, listNodes, updateNode, type NodeDeps } from './service.js';

export const nodeRoutes: FastifyPluginAsyncTypebox<{ deps: NodeDeps }> = async (app, { deps }) => {
  app.get(
    '/nodes',
    {
      config: { access: 'tenantAdmin' },
      schema: { response: { 200: Type.Object({ data: Type.Array(ComputeNode) }), ...problems(401, 403) } },
    },
    async (request) => ({
      data: await listNodes(deps, principalOf(request)),
    }),
  );

  app.post(
    '/nodes',
    { config: { access: 'tenantAdmin' }, schema: { body: NewNode, response: { 201: ComputeNode, ...problems(400, 401, 403) } } },
    async (request, reply) => reply.code(201).send(await createNode(deps, principalOf(request), request.body)),
  );

  app.get(
    '/nodes/:nodeId',
    { config: { access: 'tenantAdmin' }, schema: { params: NodeParams, response: { 200: ComputeNode, ...problems(401, 403, 404) } } },
    async (request) => getNode(deps, principalOf(request), request.params.nodeId),
  );

  app.patch(
    '/nodes/:nodeId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: NodeParams, body: NodePatch, response: { 200: ComputeNode, ...problems(400, 401, 403, 404, 409) } },
    },
    async (request) => updateNode(deps, principalOf(request), request.params.nodeId, request.body),
  );

  app.delete(
    '/nodes/:nodeId',
    { config: { access: 'tenantAdmin' }, schema: { params: NodeParams, response: { 204: Type.Null(), ...problems(401, 403, 404, 409) } } },
    async (request, reply) => {
      await deleteNode(deps, principalOf(request), request.params.nodeId);
      return reply.code(204).send(null);
    },
  );
};
