// The tenant's llm settings, kept in tenants.settings (jsonb) next to anything
// other areas store there. One reader for the tenant record and the router's cache,
// and the one check of a change.
import type { Queryable } from '../../../platform/db/database.js';
import { validation } from '../../../platform/errors.js';
import { limitsFrom, type Limits } from '../../../platform/rate-limits/limits.js';
import { grantListFrom } from '../../../platform/mcp-grants.js';
import { llmSettingsRepository } from './repository.js';
import { LlmSettingsPatch, type StreamMetadataFrame, TenantLlmSettings } from './schemas.js';

export interface LlmSettingsDeps {
  db: Queryable;
}

export function llmSettingsFrom(settings: Record<string, unknown> | null | undefined): TenantLlmSettings {
  const s = settings ?? {};
  const allowed = s.allowedModels;
  return {
    defaultModel: typeof s.defaultModel === 'string' ? s.defaultModel : null,
    allowedModels: Array.isArray(allowed) ? allowed.filter((m): m is string => typeof m === 'string') : null,
    ...withFrame(frameOf(s.streamMetadataFrame) ?? (s.streamMetadataChoices === true ? 'empty_choices' : 'spec')),
    mcp: { memberAllow: grantListFrom((s.mcp as { memberAllow?: unknown } | undefined)?.memberAllow) },
  };
}

const FRAMES: readonly StreamMetadataFrame[] = ['spec', 'empty_choices', 'chunk'];
const frameOf = (value: unknown) => FRAMES.find((frame) => frame === value);

/** The frame setting and its older boolean alias, always agreeing. */
const withFrame = (streamMetadataFrame: StreamMetadataFrame) => ({
  streamMetadataFrame,
  streamMetadataChoices: streamMetadataFrame === 'empty_choices',
});

/** streamMetadataFrame wins over its alias when a PATCH sends both. */
function frameAfter(current: StreamMetadataFrame, patch: LlmSettingsPatch): StreamMetadataFrame {
  if (patch.streamMetadataFrame !== undefined) return patch.streamMetadataFrame;
  if (patch.streamMetadataChoices !== undefined) return patch.streamMetadataChoices ? 'empty_choices' : 'spec';
  return current;
}

/**
 * The settings after `patch`, checked as a whole: the schema has bounded each
 * field already; what it cannot see is a default model that the allow list excludes.
 */
export function mergeLlmSettings(current: TenantLlmSettings, patch: LlmSettingsPatch): TenantLlmSettings {
  const next: TenantLlmSettings = {
    defaultModel: patch.defaultModel !== undefined ? patch.defaultModel : current.defaultModel,
    allowedModels: patch.allowedModels !== undefined ? patch.allowedModels : current.allowedModels,
    ...withFrame(frameAfter(current.streamMetadataFrame, patch)),
    mcp: patch.mcp !== undefined ? { memberAllow: patch.mcp.memberAllow } : current.mcp,
  };
  if (next.defaultModel !== null && next.allowedModels && !next.allowedModels.includes(next.defaultModel)) {
    throw validation(
      patch.defaultModel !== undefined ? 'defaultModel' : 'allowedModels',
      `the default model "${next.defaultModel}" must be one of allowedModels`,
    );
  }
  return next;
}

/** A tenant's settings as the router uses them, and its rate limits (an unknown tenant gets the defaults and none). */
export async function loadLlmSettings(
  deps: LlmSettingsDeps,
  tenantId: string,
): Promise<{ settings: TenantLlmSettings; limits: Limits | null }> {
  const row = await llmSettingsRepository.storedWithLimits(deps.db, tenantId);
  // The tenant's rate limits ride in the same cached entry: the request path reads them without a query.
  return { settings: llmSettingsFrom(row?.settings), limits: row?.limits ? limitsFrom(row.limits) : null };
}

/**
 * What the tenant record carries of the llm area: the `settings` object, the PATCH
 * fields that change it, its reader and its check. The composition root hands it to
 * the tenants feature (its TenantSettingsFields), which imports nothing of llm.
 */
export const tenantLlmSettings = {
  record: TenantLlmSettings,
  patch: LlmSettingsPatch,
  read: llmSettingsFrom,
  merge: mergeLlmSettings,
};
