// The threads API pages as OpenAI lists do (`?limit&after&order` → `{data, first_id,
// last_id, has_more}`), not as the console's other lists: this hook walks it with a
// stack of cursors (previous = pop), one page fetched at a time.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { List } from '../../../../src/areas/llm/history/pages.js';
import { api, type Query } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { type Loaded, useLoad } from '../../ui/use-load.js';

export interface ListPager<T> {
  page: Loaded<List<T>>;
  pager: ComponentChildren;
}

export function useOpenAiList<T>(path: string, query: Query, label: string): ListPager<T> {
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const page = useLoad((signal) => api<List<T>>(path, { query: { ...query, after }, signal }), [path, JSON.stringify(query), after]);
  const next = page.data?.has_more ? page.data.last_id : null;
  const pager =
    cursors.length > 0 || next ? (
      <nav class="pager" aria-label={label}>
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t('common.previous')}
        </button>
        <button type="button" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
          {t('common.next')}
        </button>
      </nav>
    ) : null;
  return { page, pager };
}

/** The threads API's times are unix seconds. */
export const fromSeconds = (seconds: number | null): string | null => (seconds === null ? null : new Date(seconds * 1000).toISOString());
