// /api/llm/v1/mcp/servers: the tool servers a tenant's MCP endpoint fronts (see
// service.ts for who may see and change which). Upstream secrets are write-only:
// every read masks them.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../../guard.js';
import { problems } from '../../../schemas.js';
import { McpServer, McpServerPatch, NewMcpServer, ServerParams } from './schemas.js';
import { approveServer, createServer, deleteServer, getServer, listServers, updateServer, type McpServerDeps } from './service.js';

export const mcpServerRoutes: FastifyPluginAsyncTypebox<{ deps: McpServerDeps }> = async (app, { deps }) => {
  app.get(
    '/mcp/servers',
    {
      config: { access: 'tenantAdmin' },
      schema: { response: { 200: Type.Object({ data: Type.Array(McpServer) }), ...problems(401, 403) } },
    },
    async (request) => ({ data: await listServers(deps, principalOf(request)) }),
  );

  app.post(
    '/mcp/servers',
    {
      config: { access: 'tenantAdmin' },
      schema: { body: NewMcpServer, response: { 201: McpServer, ...problems(400, 401, 403, 409) } },
    },
    async (request, reply) => reply.code(201).send(await createServer(deps, principalOf(request), request.body)),
  );

  app.get(
    '/mcp/servers/:serverId',
    { config: { access: 'tenantAdmin' }, schema: { params: ServerParams, response: { 200: McpServer, ...problems(401, 403, 404) } } },
    async (request) => getServer(deps, principalOf(request), request.params.serverId),
  );

  app.patch(
    '/mcp/servers/:serverId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: ServerParams, body: McpServerPatch, response: { 200: McpServer, ...problems(400, 401, 403, 404, 409) } },
    },
    async (request) => updateServer(deps, principalOf(request), request.params.serverId, request.body),
  );

  app.delete(
    '/mcp/servers/:serverId',
    { config: { access: 'tenantAdmin' }, schema: { params: ServerParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteServer(deps, principalOf(request), request.params.serverId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/mcp/servers/:serverId/approve',
    { config: { access: 'tenantAdmin' }, schema: { params: ServerParams, response: { 200: McpServer, ...problems(401, 403, 404) } } },
    async (request) => approveServer(deps, principalOf(request), request.params.serverId),
  );
};
