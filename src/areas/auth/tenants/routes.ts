// /api/auth/tenants: platform administration of tenants. Creating and listing
// tenants is for platform admins; a tenant's own admin may read and rename it,
// and change its settings (the llm area's: default model, allowed models, stream
// compatibility; see TenantSettingsFields in schemas.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { ListQuery, Page } from '../../paging.js';
import { problems } from '../../schemas.js';
import { NewTenantBody, TenantParams, tenantPatch, tenantRecord } from './schemas.js';
import { createTenantAs, getTenant, listTenants, updateTenant, type TenantDeps } from './service.js';

export const tenantRoutes: FastifyPluginAsyncTypebox<{ deps: TenantDeps }> = async (app, { deps }) => {
  const TenantRecord = tenantRecord(deps.tenantSettings.record);
  const TenantPatch = tenantPatch(deps.tenantSettings.patch.properties);

  app.get(
    '/tenants',
    {
      config: { access: 'platformAdmin' },
      schema: { querystring: ListQuery, response: { 200: Page(TenantRecord), ...problems(400, 401, 403) } },
    },
    async (request) => listTenants(deps, principalOf(request), request.query),
  );

  app.post(
    '/tenants',
    {
      config: { access: 'platformAdmin' },
      schema: { body: NewTenantBody, response: { 201: TenantRecord, ...problems(400, 401, 403, 409) } },
    },
    async (request, reply) => reply.code(201).send(await createTenantAs(deps, principalOf(request), request.body.name)),
  );

  app.get(
    '/tenants/:tenantId',
    { config: { access: 'tenantAdmin' }, schema: { params: TenantParams, response: { 200: TenantRecord, ...problems(401, 403, 404) } } },
    async (request) => getTenant(deps, principalOf(request), request.params.tenantId),
  );

  app.patch(
    '/tenants/:tenantId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, body: TenantPatch, response: { 200: TenantRecord, ...problems(400, 401, 403, 404, 409) } },
    },
    async (request) => updateTenant(deps, principalOf(request), request.params.tenantId, request.body),
  );
};
