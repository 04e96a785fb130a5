// A list that pages on the server: `?limit&after&q` in, `{data, next, total}` out.
// Only one page is ever fetched; the previous-page button walks back a stack of cursors.
// The search box asks the server (never filters a page in the browser).
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Query } from '../api/client.js';
import { t } from '../i18n/index.js';
import { ErrorView } from './error-view.js';
import { formatNumber } from './format.js';
import { useLoad } from './use-load.js';

export interface Page<T> {
  data: T[];
  next?: string | null;
  total?: number;
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** The row's header cell (screen readers announce it with every cell of the row). */
  rowHeader?: boolean;
}

interface Props<T> {
  path: string;
  /** What the list holds, for the search box's label ("keys"). */
  label: string;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  query?: Query;
  pageSize?: number;
  searchable?: boolean;
  /** Change it to fetch the current page again (after a create or a delete). */
  version?: number;
  /** Lets a page refresh while something in it is still changing (documents being ingested). */
  onPage?: (rows: T[]) => void;
}

export function PagedTable<T>(props: Props<T>) {
  const { pageSize = 20, searchable = true } = props;
  const [q, setQ] = useState('');
  const [typed, setTyped] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  useEffect(() => {
    const timer = setTimeout(() => {
      setQ(typed.trim());
      setCursors([]);
    }, 250);
    return () => clearTimeout(timer);
  }, [typed]);
  // The page's position travels with its rows, so "Showing 21–40" never labels the old rows.
  const page = useLoad(
    async (signal) => ({
      depth: cursors.length,
      ...(await api<Page<T>>(props.path, { query: { ...props.query, limit: pageSize, after, q: q || undefined }, signal })),
    }),
    [props.path, JSON.stringify(props.query), pageSize, after, q, props.version],
  );
  useEffect(() => {
    if (page.data) props.onPage?.(page.data.data);
  }, [page.data]);
  const rows = page.data?.data ?? [];
  const from = (page.data?.depth ?? 0) * pageSize + 1;
  const total = page.data?.total;
  return (
    <div class="paged">
      {searchable ? (
        <div class="toolbar">
          <input
            type="search"
            value={typed}
            aria-label={t('common.searchLabel', { what: props.label })}
            placeholder={t('common.search')}
            onInput={(event) => setTyped(event.currentTarget.value)}
          />
          {total !== undefined ? <span class="muted">{t('common.total', { count: formatNumber(total) })}</span> : null}
        </div>
      ) : null}
      {page.error ? <ErrorView error={page.error} retry={page.reload} /> : null}
      {/* Focusable so a keyboard can scroll a table wider than a phone (axe: scrollable-region-focusable). */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard */}
      <section class="table-wrap" tabIndex={0} aria-label={props.label}>
        <table aria-busy={page.loading}>
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th scope="col" key={column.header}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) =>
                  column.rowHeader ? (
                    <th scope="row" key={column.header}>
                      {column.cell(row)}
                    </th>
                  ) : (
                    <td key={column.header}>{column.cell(row)}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {!page.loading && rows.length === 0 && !page.error ? (
        <p class="muted">{q ? t('common.noMatches', { q }) : t('common.empty')}</p>
      ) : null}
      <nav class="pager" aria-label={props.label}>
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t('common.previous')}
        </button>
        {rows.length > 0 && total !== undefined ? (
          <span class="muted">
            {t('common.showing', { from: formatNumber(from), to: formatNumber(from + rows.length - 1), total: formatNumber(total) })}
          </span>
        ) : null}
        <button type="button" disabled={!page.data?.next} onClick={() => page.data?.next && setCursors([...cursors, page.data.next])}>
          {t('common.next')}
        </button>
      </nav>
    </div>
  );
}
