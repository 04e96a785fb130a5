// The edge's text rule (gateway/text-rules.ts) for what the body schema leaves as
// `unknown` (input items, tool schemas): strings without NUL or lone surrogates,
// which PostgreSQL cannot store (a 500 otherwise), plus size and depth bounds for
// JSON a client passes through (a tool's parameters schema).
import { validation } from '../../../platform/errors.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this is about
const NUL = /\u0000/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this is about
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

type WellFormed = string & { isWellFormed(): boolean };

/** `value` as a string of at most `max` characters: `verbatim` text (model input) or a one-line name. */
export function checkText(value: unknown, field: string, max: number, kind: 'verbatim' | 'line' = 'verbatim'): string {
  if (typeof value !== 'string') throw validation(field, 'must be a string');
  if (value.length > max) throw validation(field, `must be at most ${max} characters`);
  if ((kind === 'line' ? CONTROL : NUL).test(value))
    throw validation(field, kind === 'line' ? 'must not contain control characters' : 'must not contain NUL characters');
  if (!(value as WellFormed).isWellFormed()) throw validation(field, 'must be well-formed Unicode text (it has a lone surrogate)');
  return value;
}

export const MAX_SCHEMA_DEPTH = 32;
export const MAX_SCHEMA_CHARS = 64 * 1024;

/** A JSON object passed through (a tool's parameters): at most MAX_SCHEMA_DEPTH deep and MAX_SCHEMA_CHARS long, with storable strings. */
export function checkJsonObject(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw validation(field, 'must be a JSON object');
  walk(value, field, 0);
  if (JSON.stringify(value).length > MAX_SCHEMA_CHARS) throw validation(field, `must be at most ${MAX_SCHEMA_CHARS} characters as JSON`);
  return value as Record<string, unknown>;
}

function walk(value: unknown, field: string, depth: number): void {
  if (depth > MAX_SCHEMA_DEPTH) throw validation(field, `must be nested at most ${MAX_SCHEMA_DEPTH} levels deep`);
  if (typeof value === 'string') checkText(value, field, MAX_SCHEMA_CHARS);
  else if (Array.isArray(value)) for (const v of value) walk(v, field, depth + 1);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      checkText(k, field, MAX_SCHEMA_CHARS);
      walk(v, field, depth + 1);
    }
}
