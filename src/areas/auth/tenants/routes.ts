// /api/auth/tenants: platform administration of tenants. Creating and listing
// tenants is for platform admins; a tenant's own admin may read and rename it.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems, Text, Timestamp } from '../../schemas.js';
import { createTenantAs, getTenant, listTenants, updateTenant } from './service.js';

const TenantStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);
export const TenantRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: TenantStatus,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const Params = Type.Object({ tenantId: Type.String() });

export const tenantRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  app.get('/tenants', { schema: { response: { 200: Type.Object({ data: Type.Array(TenantRecord) }), ...problems(401, 403) } } }, async (request) => ({
    data: await listTenants(db, principalOf(request)),
  }));

  app.post(
    '/tenants',
    { schema: { body: Type.Object({ name: Text(200) }), response: { 201: TenantRecord, ...problems(400, 401, 403, 409) } } },
    async (request, reply) => reply.code(201).send(await createTenantAs(db, principalOf(request), request.body.name)),
  );

  app.get('/tenants/:tenantId', { schema: { params: Params, response: { 200: TenantRecord, ...problems(401, 403, 404) } } }, async (request) =>
    getTenant(db, principalOf(request), request.params.tenantId),
  );

  app.patch(
    '/tenants/:tenantId',
    {
      schema: {
        params: Params,
        body: Type.Object({ name: Type.Optional(Text(200)), status: Type.Optional(TenantStatus) }),
        response: { 200: TenantRecord, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => updateTenant(ctx, principalOf(request), request.params.tenantId, request.body),
  );
};
