// What SCIM users and groups share: the principal's tenant, schema checks, plain value
// checks, paging (`startIndex`, `count`), the ListResponse, and `attributes` /
// `excludedAttributes` on the way out.
import type { Principal } from '../../../platform/identity.js';
import { unauthenticated } from '../../../platform/errors.js';
import { invalidSyntax, invalidValue } from './errors.js';
import { field } from './patch.js';
import { SCHEMA, SCIM_LIMITS } from './protocol.js';

/** The tenant a SCIM token is bound to: every SCIM statement filters by it. */
export function scimTenant(principal: Principal): string {
  // The edge and guard.ts let nothing else reach the SCIM routes; this holds if they ever did.
  if (principal.kind !== 'scim') throw unauthenticated();
  return principal.tenantId;
}

/** The body is an object whose `schemas` lists `urn` (RFC 7643 §3: every request names its schema). */
export function requireSchema(body: unknown, urn: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidSyntax('The request body must be a JSON object.');
  const schemas = field(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === urn.toLowerCase()))
    throw invalidSyntax(`The body's "schemas" must list ${urn}.`);
  checkText(body, 'the body');
  return body as Record<string, unknown>;
}

// Nothing the database cannot store: NUL and lone surrogates are refused anywhere in a body.
/* biome-ignore-start lint/suspicious/noControlCharactersInRegex: control characters are what these look for */
const NUL = /\u0000/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/* biome-ignore-end lint/suspicious/noControlCharactersInRegex: control characters are what these look for */
type WellFormedString = string & { isWellFormed(): boolean };

function checkText(value: unknown, where: string, depth = 0): void {
  if (depth > 32) throw invalidValue('The body nests deeper than 32 levels.');
  if (typeof value === 'string') {
    if (NUL.test(value) || !(value as WellFormedString).isWellFormed())
      throw invalidValue(`A string in ${where} holds NUL or a lone surrogate.`);
  } else if (Array.isArray(value)) for (const item of value) checkText(item, where, depth + 1);
  else if (typeof value === 'object' && value !== null)
    for (const [key, inner] of Object.entries(value)) {
      checkText(key, where, depth + 1);
      checkText(inner, where, depth + 1);
    }
}

/** A one-line string attribute (no control characters), at most `max` characters; undefined/null when absent. */
export function lineOf(value: unknown, name: string, max: number = SCIM_LIMITS.maxNameLength): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidValue(`${name} must be a string.`);
  if (value.length > max) throw invalidValue(`${name} is longer than ${max} characters.`);
  if (CONTROL.test(value)) throw invalidValue(`${name} must not contain control characters.`);
  return value;
}

export interface Paging {
  /** 1-based (RFC 7644 §3.4.2.4). */
  startIndex: number;
  count: number;
}

/** `startIndex` below 1 counts as 1 and a negative `count` as 0 (RFC 7644 §3.4.2.4); a count above maxResults is lowered to it. */
export function pagingOf(query: { startIndex?: string; count?: string }): Paging {
  const integer = (raw: string | undefined, name: string, fallback: number) => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^-?\d{1,12}$/.test(raw.trim())) throw invalidValue(`${name} must be an integer.`);
    return Number(raw.trim());
  };
  const startIndex = Math.max(1, integer(query.startIndex, 'startIndex', 1));
  const count = Math.min(SCIM_LIMITS.maxResults, Math.max(0, integer(query.count, 'count', SCIM_LIMITS.defaultCount)));
  return { startIndex, count };
}

export function listResponse<T extends object>(resources: T[], total: number, paging: Paging) {
  return {
    schemas: [SCHEMA.listResponse],
    totalResults: total,
    startIndex: paging.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

const ALWAYS_RETURNED = new Set(['id', 'schemas']);

/**
 * `attributes` (only these, and id and schemas) or `excludedAttributes` (all but these:
 * Entra's `excludedAttributes=members` on Groups), top-level names in any case, a
 * comma-separated list (RFC 7644 §3.9). Sub-attribute paths count as their attribute.
 */
export function project<T extends Record<string, unknown>>(resource: T, query: { attributes?: string; excludedAttributes?: string }): T {
  const names = (raw: string | undefined) =>
    raw === undefined
      ? undefined
      : new Set(
          raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .map((s) =>
              s
                .replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i, '')
                .split(/[.[]/)[0]!
                .toLowerCase(),
            ),
        );
  const only = names(query.attributes);
  const excluded = names(query.excludedAttributes);
  if (!only && !excluded) return resource;
  return Object.fromEntries(
    Object.entries(resource).filter(([key]) => {
      const k = key.toLowerCase();
      if (ALWAYS_RETURNED.has(k)) return true;
      if (only) return only.has(k);
      return !excluded!.has(k);
    }),
  ) as T;
}
