// GET /api/auth/tenants/{tenantId}/usage: the tenant's model usage over a window,
// per API key or user, per model or per UTC day. For the tenant's admins and
// platform admins; another tenant's admin gets 404, as on the tenant itself.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { TenantParams } from '../tenants/schemas.js';
import { UsageQuery, UsageReport } from './schemas.js';
import { tenantUsage, type UsageReportDeps } from './service.js';

export const usageReportRoutes: FastifyPluginAsyncTypebox<{ deps: UsageReportDeps }> = async (app, { deps }) => {
  app.get(
    '/tenants/:tenantId/usage',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, querystring: UsageQuery, response: { 200: UsageReport, ...problems(400, 401, 403, 404) } },
    },
    async (request) => tenantUsage(deps, principalOf(request), request.params.tenantId, request.query),
  );
};
