// The tenant's llm settings. They sit on the auth area's tenant record
// (GET/PATCH /api/auth/tenants/{id}) but belong to the llm area, the way a
// better-auth plugin owns the fields it adds to another model: the composition
// root hands these schemas to the tenants feature (tenantLlmSettings in service.ts).
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text } from '../../schemas.js';

export const MAX_ALLOWED_MODELS = 500;

const ModelId = Text(200);
const DefaultModel = Type.Union([ModelId, Type.Null()]);
const AllowedModels = Type.Union([Type.Array(ModelId, { maxItems: MAX_ALLOWED_MODELS, uniqueItems: true }), Type.Null()]);

/** The `settings` object of the tenant record (stored in `tenants.settings`, cached by the router; no query per request). */
export const TenantLlmSettings = Type.Object({
  /** What `model: "auto"` means for the tenant; null: the first available model. */
  defaultModel: DefaultModel,
  /** The models the tenant may use; null: every model its nodes serve. */
  allowedModels: AllowedModels,
  /** Adds `"choices": []` to the chat stream's metadata frame, for clients that expect it in every frame. */
  streamMetadataChoices: Type.Boolean(),
});
export type TenantLlmSettings = Static<typeof TenantLlmSettings>;

/** The fields of PATCH /api/auth/tenants/{id} that change them, each optional. */
export const LlmSettingsPatch = Type.Object({
  defaultModel: Type.Optional(DefaultModel),
  allowedModels: Type.Optional(AllowedModels),
  streamMetadataChoices: Type.Optional(Type.Boolean()),
});
export type LlmSettingsPatch = Static<typeof LlmSettingsPatch>;
