// /api/auth/tenants/{tenantId}/users: a tenant admin (or a platform admin)
// manages the tenant's users. Another tenant's admin gets 404, as if the
// tenant did not exist; a member gets 403.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { ListQuery, Page } from '../../paging.js';
import { problems } from '../../schemas.js';
import { NewUserBody, TenantParams, UserParams, UserPatch, UserRecord } from './schemas.js';
import { createUserAs, getUser, listUsers, updateUser, type UserDeps } from './service.js';

export const userRoutes: FastifyPluginAsyncTypebox<{ deps: UserDeps }> = async (app, { deps }) => {
  app.get(
    '/tenants/:tenantId/users',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, querystring: ListQuery, response: { 200: Page(UserRecord), ...problems(400, 401, 403, 404) } },
    },
    async (request) => listUsers(deps, principalOf(request), request.params.tenantId, request.query),
  );

  app.post(
    '/tenants/:tenantId/users',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, body: NewUserBody, response: { 201: UserRecord, ...problems(400, 401, 403, 404, 409) } },
    },
    async (request, reply) => reply.code(201).send(await createUserAs(deps, principalOf(request), request.params.tenantId, request.body)),
  );

  app.get(
    '/tenants/:tenantId/users/:userId',
    { config: { access: 'tenantAdmin' }, schema: { params: UserParams, response: { 200: UserRecord, ...problems(401, 403, 404) } } },
    async (request) => getUser(deps, principalOf(request), request.params.tenantId, request.params.userId),
  );

  app.patch(
    '/tenants/:tenantId/users/:userId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: UserParams, body: UserPatch, response: { 200: UserRecord, ...problems(400, 401, 403, 404, 409) } },
    },
    async (request) => updateUser(deps, principalOf(request), request.params.tenantId, request.params.userId, request.body),
  );
};
