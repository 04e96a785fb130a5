// JSON: an array of records reads best as a table (one row per record, the keys as
// header); anything else as `path: value` lines, one per leaf, so each value is found
// next to the name that says what it is.
import type { Block, Extraction } from './types.js';
import { ExtractionError } from './types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function extractJson(text: string): Extraction {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ExtractionError('malformed', `The JSON file does not parse: ${(error as Error).message}`);
  }
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
