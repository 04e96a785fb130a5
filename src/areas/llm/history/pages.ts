// OpenAI's list convention for the threads API (`?limit&order&after&before` →
// `{object: "list", data, first_id, last_id, has_more}`), over the store's keyset pages.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { validation } from '../../../platform/errors.js';
import type { Page } from './repository.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Strings on the wire (no coercion), checked by pageOf. */
export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ maxLength: 10 })),
  order: Type.Optional(Type.String({ maxLength: 10 })),
  after: Type.Optional(Type.String({ maxLength: 64 })),
  before: Type.Optional(Type.String({ maxLength: 64 })),
});
export type ListQuery = Static<typeof ListQuery>;

/**
 * A page to fetch. `reversed`: fetched in the opposite order and turned around by
 * listOf; the repositories need not know (they take it as a plain Page).
 */
export type ListPage = Page & { reversed?: true };

/**
 * The page a query asks for, with one row more than `limit` (to tell has_more).
 * `isCursor` checks after/before are ids of the listed kind (400 otherwise). OpenAI's
 * default order is `desc` (newest first). `before` alone asks for the previous page:
 * the `limit` objects just before the cursor, so they are fetched nearest first (the
 * other order, `after` the cursor) and turned back into the asked order by listOf.
 */
export function pageOf(query: ListQuery, isCursor: (id: string) => boolean): ListPage {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw validation('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw validation('order', 'must be asc or desc');
  for (const name of ['after', 'before'] as const) {
    const cursor = query[name];
    if (cursor !== undefined && !isCursor(cursor)) throw validation(name, 'must be the id of an object in this list');
  }
  if (query.before && !query.after)
    return { limit: limit + 1, order: order === 'asc' ? 'desc' : 'asc', after: query.before, reversed: true };
  return { limit: limit + 1, order, ...(query.after ? { after: query.after } : {}), ...(query.before ? { before: query.before } : {}) };
}

export interface List<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** The list answer for rows fetched with pageOf's page (one extra row = has_more). */
export function listOf<R, T extends { id: string }>(rows: R[], page: ListPage, toObject: (row: R) => T): List<T> {
  const kept = rows.slice(0, page.limit - 1);
  const data = (page.reversed ? kept.reverse() : kept).map(toObject);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length >= page.limit };
}

/** The list's TypeBox schema for an object schema. */
export const ListOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  });
