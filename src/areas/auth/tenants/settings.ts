// The tenant's llm settings, kept in tenants.settings (jsonb) next to anything
// other areas store there. One reader for the record and the router's cache.
import type { TenantLlmSettings } from '../../llm/router/types.js';
import { validation } from '../../../platform/errors.js';

export type { TenantLlmSettings };

export const MAX_ALLOWED_MODELS = 500;

export function llmSettingsFrom(settings: Record<string, unknown> | null | undefined): TenantLlmSettings {
  const s = settings ?? {};
  const allowed = s.allowedModels;
  return {
    defaultModel: typeof s.defaultModel === 'string' ? s.defaultModel : null,
    allowedModels: Array.isArray(allowed) ? allowed.filter((m): m is string => typeof m === 'string') : null,
    streamMetadataChoices: s.streamMetadataChoices === true,
  };
}

export type LlmSettingsPatch = Partial<TenantLlmSettings>;

/**
 * The settings after `patch`, checked as a whole: the schema has bounded each
 * field already; what it cannot see is a default model that the allow list excludes.
 */
export function mergeLlmSettings(current: TenantLlmSettings, patch: LlmSettingsPatch): TenantLlmSettings {
  const next: TenantLlmSettings = {
    defaultModel: patch.defaultModel !== undefined ? patch.defaultModel : current.defaultModel,
    allowedModels: patch.allowedModels !== undefined ? patch.allowedModels : current.allowedModels,
    streamMetadataChoices: patch.streamMetadataChoices ?? current.streamMetadataChoices,
  };
  if (next.defaultModel !== null && next.allowedModels && !next.allowedModels.includes(next.defaultModel)) {
    throw validation(patch.defaultModel !== undefined ? 'defaultModel' : 'allowedModels', `the default model "${next.defaultModel}" must be one of allowedModels`);
  }
  return next;
}
