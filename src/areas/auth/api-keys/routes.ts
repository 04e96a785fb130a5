// /api/auth/tenants/{tenantId}/api-keys (spec 2.1, 2.2, 3): key management with
// an administrator's access token. API keys cannot manage keys (403); another
// tenant's admin gets 404 and changes nothing.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems, Text, Timestamp } from '../../schemas.js';
import { API_KEY_LIMITS, createApiKey, deleteApiKey, getApiKey, listApiKeys, setApiKeyStatus } from './service.js';

const Scope = Type.String({ minLength: 1, maxLength: API_KEY_LIMITS.scopeMaxLength, pattern: API_KEY_LIMITS.scopePattern });

const recordFields = {
  id: Type.String(),
  name: Type.String(),
  maskedKey: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  scopes: Type.String({ description: 'JSON-encoded array of strings' }),
  createdAt: Timestamp,
  expiresAt: Type.Optional(Timestamp),
  customerId: Type.Optional(Type.String()),
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
};
// Two schemas on purpose: the serializer drops any field a schema does not name,
// so the plaintext `key` cannot leak from list, get, revoke or activate.
const ApiKeyRecord = Type.Object(recordFields);
const CreatedApiKey = Type.Object({ ...recordFields, key: Type.String() });

const TenantParams = Type.Object({ tenantId: Type.String() });
const KeyParams = Type.Object({ tenantId: Type.String(), keyId: Type.String() });

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  app.post(
    '/tenants/:tenantId/api-keys',
    {
      schema: {
        params: TenantParams,
        body: Type.Object({
          name: Text(API_KEY_LIMITS.nameMaxLength),
          scopes: Type.Optional(Type.Array(Scope, { maxItems: API_KEY_LIMITS.maxScopes })),
          expiresAt: Type.Optional(Timestamp),
          customerId: Type.Optional(Text(API_KEY_LIMITS.customerIdMaxLength)),
        }),
        response: { 201: CreatedApiKey, ...problems(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await createApiKey(ctx, principalOf(request), request.params.tenantId, request.body)),
  );

  app.get(
    '/tenants/:tenantId/api-keys',
    { schema: { params: TenantParams, response: { 200: Type.Object({ data: Type.Array(ApiKeyRecord) }), ...problems(401, 403, 404) } } },
    async (request) => ({ data: await listApiKeys(db, principalOf(request), request.params.tenantId) }),
  );

  app.get('/tenants/:tenantId/api-keys/:keyId', { schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } }, async (request) =>
    getApiKey(db, principalOf(request), request.params.tenantId, request.params.keyId),
  );

  app.post(
    '/tenants/:tenantId/api-keys/:keyId/revoke',
    { schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } },
    async (request) => setApiKeyStatus(ctx, principalOf(request), request.params.tenantId, request.params.keyId, 'revoked'),
  );

  app.post(
    '/tenants/:tenantId/api-keys/:keyId/activate',
    { schema: { params: KeyParams, response: { 200: ApiKeyRecord, ...problems(401, 403, 404) } } },
    async (request) => setApiKeyStatus(ctx, principalOf(request), request.params.tenantId, request.params.keyId, 'active'),
  );

  app.delete(
    '/tenants/:tenantId/api-keys/:keyId',
    { schema: { params: KeyParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteApiKey(ctx, principalOf(request), request.params.tenantId, request.params.keyId);
      return reply.code(204).send(null);
    },
  );
};
