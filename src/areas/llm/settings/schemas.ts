// The tenant's llm settings. They sit on the auth area's tenant record
// (GET/PATCH /api/auth/tenants/{id}) but belong to the llm area, the way a
// better-auth plugin owns the fields it adds to another model: the composition
// root hands these schemas to the tenants feature (tenantLlmSettings in service.ts).
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text } from '../../schemas.js';
import { McpGrantList } from '../../../platform/mcp-grants.js';

export const MAX_ALLOWED_MODELS = 500;

const ModelId = Text(200);
const DefaultModel = Type.Union([ModelId, Type.Null()]);
const AllowedModels = Type.Union([Type.Array(ModelId, { maxItems: MAX_ALLOWED_MODELS, uniqueItems: true }), Type.Null()]);

/**
 * The chat stream's metadata frame (spec 6.1 and its compatibility modes): `spec` as the
 * spec shows it (no `choices`), `empty_choices` adds `"choices": []`, `chunk` makes it a
 * whole chat.completion.chunk with OpenAI's empty first delta and the rag_* fields.
 */
export const StreamMetadataFrame = Type.Union([Type.Literal('spec'), Type.Literal('empty_choices'), Type.Literal('chunk')]);
export type StreamMetadataFrame = Static<typeof StreamMetadataFrame>;

/** The `settings` object of the tenant record (stored in `tenants.settings`, cached by the router; no query per request). */
export const TenantLlmSettings = Type.Object({
  /** What `model: "auto"` means for the tenant; null: the first available model. */
  defaultModel: DefaultModel,
  /** The models the tenant may use; null: every model its nodes serve. */
  allowedModels: AllowedModels,
  /** The chat stream's metadata frame when a request does not choose one (stream_options.metadata_frame). */
  streamMetadataFrame: StreamMetadataFrame,
  /**
   * The earlier name of `streamMetadataFrame: "empty_choices"`, kept as an alias: always
   * true exactly when streamMetadataFrame is `empty_choices`.
   */
  streamMetadataChoices: Type.Boolean(),
  /** The MCP tools the tenant's members may see and call (`server/*`, `server/tool`); admins reach every tool. */
  mcp: Type.Object({ memberAllow: McpGrantList }),
});
export type TenantLlmSettings = Static<typeof TenantLlmSettings>;

/** The fields of PATCH /api/auth/tenants/{id} that change them, each optional. */
export const LlmSettingsPatch = Type.Object({
  defaultModel: Type.Optional(DefaultModel),
  allowedModels: Type.Optional(AllowedModels),
  streamMetadataFrame: Type.Optional(StreamMetadataFrame),
  /** true: streamMetadataFrame `empty_choices`; false: `spec`. When both are sent, streamMetadataFrame wins. */
  streamMetadataChoices: Type.Optional(Type.Boolean()),
  /** Replaces the members' MCP grant (`memberAllow: []`: none). */
  mcp: Type.Optional(Type.Object({ memberAllow: McpGrantList }, { additionalProperties: false })),
});
export type LlmSettingsPatch = Static<typeof LlmSettingsPatch>;
