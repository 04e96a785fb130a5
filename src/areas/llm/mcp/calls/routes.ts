// GET /api/llm/v1/mcp/calls?from&to&server&tool&limit&after: the tenant's MCP call audit,
// for its admins. A static path under /mcp/: no server may take the name (registry).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Queryable } from '../../../../platform/db/database.js';
import { principalOf } from '../../../guard.js';
import { problems } from '../../../schemas.js';
import { McpCallPage, McpCallQuery } from './schemas.js';
import { listMcpCalls } from './service.js';

export const mcpCallRoutes: FastifyPluginAsyncTypebox<{ deps: { db: Queryable } }> = async (app, { deps }) => {
  app.get(
    '/mcp/calls',
    {
      config: { access: 'tenantAdmin' },
      schema: { querystring: McpCallQuery, response: { 200: McpCallPage, ...problems(400, 401, 403) } },
    },
    async (request) => listMcpCalls(deps.db, principalOf(request), request.query),
  );
};
