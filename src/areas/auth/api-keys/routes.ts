// /api/auth/tenants/{tenantId}/api-keys (spec 2.1, 2.2, 3): key management with
// an administrator's access token. API keys cannot manage keys (403); another
// tenant's admin gets 404 and changes nothing.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { ListQuery, Page } from '../../paging.js';
import { problems } from '../../schemas.js';
import { ApiKeyPatch, ApiKeyRecord, CreatedApiKey, KeyParams, NewApiKey, TenantParams } from './schemas.js';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys, setApiKeyStatus, updateApiKey, type ApiKeyDeps } from './service.js';

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: ApiKeyDeps }> = async (app, { deps }) => {
  app.post(
    '/tenants/:tenantId/api-keys',
    {
      config: { access: 'tenantAdmin' },
      schema: {
        params: TenantParams,
        body: NewApiKey,
        response: { 201: CreatedApiKey, ...problems(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await createApiKey(deps, principalOf(request), request.params.tenantId, request.body)),
  );

  app.get(
    '/tenants/:tenantId/api-keys',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, querystring: ListQuery, response: { 200: Page(ApiKeyRecord), ...problems(400, 401, 403, 404) } },
    },
    async (request) => listApiKeys(deps, principalOf(request), request.params.tenantId, request.query),
  );

  app.get(
    '/tenants/:tenantId/api-keys/:keyId',
    { config: { access: 'tenantAdmin' }, schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } },
    async (request) => getApiKey(deps, principalOf(request), request.params.tenantId, request.params.keyId),
  );

  // Rate limits and budgets (src/platform/rate-limits/) and the MCP grant (platform/mcp-grants.ts): each field the body names replaces the key's.
  app.patch(
    '/tenants/:tenantId/api-keys/:keyId',
    {
      config: { access: 'tenantAdmin' },
      schema: { params: KeyParams, body: ApiKeyPatch, response: { 200: ApiKeyRecord, ...problems(400, 401, 403, 404) } },
    },
    async (request) => updateApiKey(deps, principalOf(request), request.params.tenantId, request.params.keyId, request.body),
  );

  app.post(
    '/tenants/:tenantId/api-keys/:keyId/revoke',
    { config: { access: 'tenantAdmin' }, schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } },
    async (request) => setApiKeyStatus(deps, principalOf(request), request.params.tenantId, request.params.keyId, 'revoked'),
  );

  app.post(
    '/tenants/:tenantId/api-keys/:keyId/activate',
    { config: { access: 'tenantAdmin' }, schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } },
    async (request) => setApiKeyStatus(deps, principalOf(request), request.params.tenantId, request.params.keyId, 'active'),
  );

  app.delete(
    '/tenants/:tenantId/api-keys/:keyId',
    { config: { access: 'tenantAdmin' }, schema: { params: KeyParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteApiKey(deps, principalOf(request), request.params.tenantId, request.params.keyId);
      return reply.code(204).send(null);
    },
  );
};
