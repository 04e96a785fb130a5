// How a thread's grounding scope and metadata read in the list and the viewer.
import { t } from '../../i18n/index.js';

export const scopeText = (scope: { workspace_ids: string[]; collection_ids: string[] }): string =>
  scope.workspace_ids.length + scope.collection_ids.length === 0
    ? t('threads.scopeNone')
    : t('threads.scopeCount', { workspaces: scope.workspace_ids.length, collections: scope.collection_ids.length });

export const metadataText = (metadata: Record<string, string>): string =>
  Object.entries(metadata)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ') || '—';
