// JSON: an array of records reads best as a table (one row per record, the keys as
// header); anything else as `path: value` lines, one per leaf, so each value is found
// next to the name that says what it is.
import type { Block, Extraction } from './types.js';
import { ExtractionError } from './types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * How deep arrays and objects may sit inside each other. Reading one path per leaf
 * recurses once per level: a 200,000-deep file ran out of stack ("Maximum call stack
 * size exceeded", issue 26). Real data stays far below; the file is refused, saying why.
 */
export const JSON_MAX_DEPTH = 1000;

export function extractJson(text: string): Extraction {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ExtractionError('malformed', `The JSON file does not parse: ${(error as Error).message}`);
  }
  if (exceedsDepth(value, JSON_MAX_DEPTH))
    throw new ExtractionError(
      'malformed',
      `The JSON file is nested deeper than ${JSON_MAX_DEPTH.toLocaleString('en-US')} levels (arrays and objects inside each other): it is not read.`,
    );
  const table = asTable(value);
  if (table) return { title: null, blocks: [table] };
  const lines: string[] = [];
  flatten(value, '', lines);
  // Long documents are split between lines by chunking, never inside one.
  return { title: null, blocks: lines.length > 0 ? [{ kind: 'preformatted', text: lines.join('\n'), page: null }] : [] };
}

const isRecord = (v: Json): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);
const scalar = (v: Json): string => (typeof v === 'string' ? v : JSON.stringify(v));

function asTable(value: Json): Block | null {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isRecord)) return null;
  const keys = [...new Set(value.flatMap((record) => Object.keys(record)))];
  const rows = value.map((record) => keys.map((key) => (key in record ? scalar(record[key]!).replace(/\s+/g, ' ') : '')));
  return { kind: 'table', header: [keys], rows, page: null };
}

function flatten(value: Json, path: string, out: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${path || '$'}: []`);
    for (const [i, v] of value.entries()) flatten(v, `${path}[${i}]`, out);
  } else if (isRecord(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) out.push(`${path || '$'}: {}`);
    for (const [key, v] of entries) flatten(v, path === '' ? key : `${path}.${key}`, out);
  } else {
    out.push(`${path || '$'}: ${scalar(value)}`);
  }
}

/** Whether arrays and objects nest more than `max` levels deep; walks without recursion, so any depth is safe. */
function exceedsDepth(value: Json, max: number): boolean {
  const pending: [Json, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
