// Paged lists, the same on every area: `?limit&after&q` in, `{data, next, total}` out.
// `after` is the `next` of the page before (opaque to clients: each list says what it
// holds), `q` a case-insensitive substring search on the list's obvious fields, and
// `total` counts every row that matches (q applied), not just the page.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { validation } from '../platform/errors.js';

export const SEARCH_MAX_LENGTH = 200;

/** `?limit&after&q`: strings on the wire (no coercion), checked by the service. */
export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ maxLength: 10, description: 'Page size (an integer; the range is the list’s own).' })),
  after: Type.Optional(Type.String({ maxLength: 64, description: 'The `next` of the previous page.' })),
  q: Type.Optional(Type.String({ maxLength: SEARCH_MAX_LENGTH, description: 'Case-insensitive substring search; empty: no filter.' })),
});
export type ListQuery = Static<typeof ListQuery>;

const Next = Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page (`?after=`); null on the last.' });
const Total = Type.Integer({ minimum: 0, description: 'Every row that matches (q applied), not just this page.' });

/** A page of `item`s: `{data, next, total}`. */
export const Page = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ data: Type.Array(item), next: Next, total: Total });

export interface PageOf<T> {
  data: T[];
  next: string | null;
  total: number;
}

/**
 * The page size asked for: `fallback` without one (undefined: the whole list, for lists
 * that answered everything before they paged), else an integer in 1..max or a 400.
 */
export function pageLimit(raw: string | undefined, range: { fallback: number | undefined; max: number }): number | undefined {
  if (raw === undefined) return range.fallback;
  const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= range.max)) throw validation('limit', `must be an integer from 1 to ${range.max}`);
  return limit;
}

/**
 * The ILIKE pattern for a substring search, or null for no filter (no q, or an empty
 * one). `%`, `_` and `\` in the search are matched literally: escaped with the
 * backslash, LIKE's default escape character, which the queries also name.
 */
export function containsPattern(q: string | undefined): string | null {
  if (q === undefined || q === '') return null;
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Cuts the `limit + 1` rows a query fetched into a page: the extra row only says that
 * another page follows, and `next` is the cursor of the page's last row.
 */
export function pageFrom<R, T>(
  rows: R[],
  limit: number | undefined,
  total: number,
  toRecord: (row: R) => T,
  cursorOf: (row: R) => string,
): PageOf<T> {
  const page = limit === undefined ? rows : rows.slice(0, limit);
  const more = limit !== undefined && rows.length > limit;
  return { data: page.map(toRecord), next: more ? cursorOf(page[page.length - 1]!) : null, total };
}

/**
 * A list's page and its total, fetched together: reads `?limit` (in `range`) and `?q`,
 * asks `rows` for one row more than the page (to know whether another follows) and
 * `count` for every match. The caller checks `?after`, which only it can read.
 */
export async function pagedList<R, T>(
  query: ListQuery,
  list: {
    range: { fallback: number | undefined; max: number };
    rows: (window: { limit: number | null; pattern: string | null }) => Promise<R[]>;
    count: (pattern: string | null) => Promise<number>;
    toRecord: (row: R) => T;
    cursorOf: (row: R) => string;
  },
): Promise<PageOf<T>> {
  const limit = pageLimit(query.limit, list.range);
  const pattern = containsPattern(query.q);
  const [rows, total] = await Promise.all([list.rows({ limit: limit === undefined ? null : limit + 1, pattern }), list.count(pattern)]);
  return pageFrom(rows, limit, total, list.toRecord, list.cursorOf);
}
