// /api/auth/tenants/{tenantId}/scim-tokens: a tenant admin (or a platform admin)
// manages the bearer tokens the tenant's identity provider provisions with. API keys
// and members get 403; another tenant's admin gets 404.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { Page } from '../../paging.js';
import { problems } from '../../schemas.js';
import { CreatedScimToken, NewScimToken, ScimTokenParams, ScimTokenRecord, TenantParams } from './schemas.js';
import { createScimToken, deleteScimToken, listScimTokens, type ScimTokenDeps } from './service.js';

export const scimTokenRoutes: FastifyPluginAsyncTypebox<{ deps: ScimTokenDeps }> = async (app, { deps }) => {
  app.get(
    '/tenants/:tenantId/scim-tokens',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, response: { 200: Page(ScimTokenRecord), ...problems(401, 403, 404) } },
    },
    async (request) => listScimTokens(deps, principalOf(request), request.params.tenantId),
  );

  app.post(
    '/tenants/:tenantId/scim-tokens',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, body: NewScimToken, response: { 201: CreatedScimToken, ...problems(400, 401, 403, 404) } },
    },
    async (request, reply) =>
      reply.code(201).send(await createScimToken(deps, principalOf(request), request.params.tenantId, request.body)),
  );

  app.delete(
    '/tenants/:tenantId/scim-tokens/:scimTokenId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: ScimTokenParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } },
    },
    async (request, reply) => {
      await deleteScimToken(deps, principalOf(request), request.params.tenantId, request.params.scimTokenId);
      return reply.code(204).send(null);
    },
  );
};
