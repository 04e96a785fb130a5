// /api/auth/tenants: platform administration of tenants. Creating and listing
// tenants is for platform admins; a tenant's own admin may read and rename it,
// and set its llm settings (default model, allowed models, stream compatibility).
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems, Text, Timestamp } from '../../schemas.js';
import { createTenantAs, getTenant, listTenants, updateTenant } from './service.js';
import { MAX_ALLOWED_MODELS } from './settings.js';

const TenantStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);
const ModelId = Text(200);
const DefaultModel = Type.Union([ModelId, Type.Null()]);
const AllowedModels = Type.Union([Type.Array(ModelId, { maxItems: MAX_ALLOWED_MODELS, uniqueItems: true }), Type.Null()]);
export const TenantSettings = Type.Object({
  /** What `model: "auto"` means for the tenant; null: the first available model. */
  defaultModel: DefaultModel,
  /** The models the tenant may use; null: every model its nodes serve. */
  allowedModels: AllowedModels,
  /** Adds `"choices": []` to the chat stream's metadata frame, for clients that expect it in every frame. */
  streamMetadataChoices: Type.Boolean(),
});
export const TenantRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: TenantStatus,
  settings: TenantSettings,
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
        body: Type.Object({
          name: Type.Optional(Text(200)),
          status: Type.Optional(TenantStatus),
          defaultModel: Type.Optional(DefaultModel),
          allowedModels: Type.Optional(AllowedModels),
          streamMetadataChoices: Type.Optional(Type.Boolean()),
        }),
        response: { 200: TenantRecord, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => updateTenant(ctx, principalOf(request), request.params.tenantId, request.body),
  );
};
