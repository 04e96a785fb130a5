// Values drawn from a route's JSON schema: a valid value (so a mutation elsewhere is
// the only thing wrong with a body), the paths of its fields, and hostile values for
// one schema node: wrong types, NUL and control characters, lone surrogates, long
// strings, numbers beyond a double, oversized and deeply nested arrays and objects,
// and prototype-polluting keys.
import type { Rng } from './prng.js';
import { BIG, POISON, Raw } from './json-text.js';

export type Schema = { [keyword: string]: any };
/** A value the route needs for this field (an id of a fixture, a model it serves), or undefined. */
export type Hint = (field: string) => unknown;
export interface Labeled {
  label: string;
  value: unknown;
}

const isNever = (s: Schema) => s.not !== undefined && Object.keys(s.not).length === 0;
const nonNull = (branches: Schema[]) => branches.filter((b) => b.type !== 'null');

export function validValue(schema: Schema, field: string, rng: Rng, hint: Hint): unknown {
  const hinted = hint(field);
  if (hinted !== undefined) return hinted;
  if ('const' in schema) return schema.const;
  if (schema.anyOf) return validValue(rng.pick(nonNull(schema.anyOf).length ? nonNull(schema.anyOf) : schema.anyOf), field, rng, hint);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
        if (isNever(prop)) continue;
        if (schema.required?.includes(name) || rng.chance(0.5)) out[name] = validValue(prop, name, rng, hint);
      }
      return out;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const count = rng.int(min, Math.min(schema.maxItems ?? 3, Math.max(min, 2)));
      return Array.from({ length: count }, () => validValue(schema.items ?? {}, `${field}[]`, rng, hint));
    }
    case 'string':
      return schema.format === 'date-time' ? new Date(Date.now() + 30 * 86_400_000).toISOString() : `fuzz-${rng.word(6)}`;
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? 0;
      return rng.int(min, Math.min(schema.maximum ?? min + 10, min + 10));
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    default:
      return 'fuzz';
  }
}

export interface FieldPath {
  /** Property names and array indexes from the body's root; [] is the whole body. */
  path: (string | number)[];
  field: string;
  schema: Schema;
}

/** Every node of the schema a mutation can target, the body itself first. */
export function fieldPaths(schema: Schema, path: (string | number)[] = [], field = 'body'): FieldPath[] {
  const out: FieldPath[] = [{ path, field, schema }];
  const branch = schema.anyOf ? schema.anyOf.find((b: Schema) => b.type === 'object' || b.type === 'array') : schema;
  if (branch?.type === 'object') {
    for (const [name, prop] of Object.entries<Schema>(branch.properties ?? {})) out.push(...fieldPaths(prop, [...path, name], name));
  }
  if (branch?.type === 'array' && branch.items) out.push(...fieldPaths(branch.items, [...path, 0], `${field}[]`));
  return out;
}

/** A copy of `body` with `value` at `path`, creating the objects and arrays on the way. */
export function setAt(body: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (typeof head === 'number') {
    const copy = Array.isArray(body) ? [...body] : [];
    copy[head] = setAt(copy[head], rest, value);
    return copy;
  }
  const copy: Record<string, unknown> = body !== null && typeof body === 'object' && !Array.isArray(body) ? { ...(body as object) } : {};
  copy[head] = setAt(copy[head], rest, value);
  return copy;
}

const STRINGS: [string, string][] = [
  ['NUL', '\u0000'],
  ['NUL inside', 'fuzz\u0000name'],
  ['control characters', 'a\u0007b\u001bc\u007f'],
  ['lone surrogate', 'a\ud800b'],
  ['reversed surrogates', '\udfff\ud800'],
  ['BOM, RTL override, zero width', '\ufeff\u202e\u200bx'],
  ['emoji x500', '😀'.repeat(500)],
  ['only spaces', '   '],
  ['newline', '\n'],
  ['SQL', "' OR 1=1; DROP TABLE tenants; --"],
  ['path traversal', '../../../../etc/passwd'],
  ['file URL', 'file:///etc/passwd'],
  ['format string', '%s%n%x%00'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of a template injection, on purpose
  ['template', '${jndi:ldap://x}{{7*7}}'],
  ['markup', '<script>alert(1)</script>'],
  ['backslashes', '\\\\\\'],
  ['case-folding letters', 'İıſßK'],
];
const NUMBERS: [string, unknown][] = [
  ['1e400', new Raw('1e400')],
  ['-1e400', new Raw('-1e400')],
  ['-0', new Raw('-0')],
  ['2^53+1', new Raw('9007199254740993')],
  ['30 digits', new Raw('123456789012345678901234567890')],
  ['1e308', 1e308],
  ['-1e308', -1e308],
  ['2^31', 2147483648],
  ['5e-324', 5e-324],
  ['0.1', 0.1],
];
const WRONG_TYPES: [string, unknown][] = [
  ['null', null],
  ['true', true],
  ['0', 0],
  ['-1', -1],
  ['empty string', ''],
  ['"1"', '1'],
  ['empty array', []],
  ['empty object', {}],
  ['[null]', [null]],
];
const DATES: string[] = [
  '2024-13-45T25:61:61Z',
  '0000-00-00T00:00:00Z',
  '2024-01-01T00:00:00+99:99',
  '99999-01-01T00:00:00Z',
  '2024-02-30',
];

/** One hostile value for the node, with a few words saying what it is. */
export function hostileValue(schema: Schema, rng: Rng, valid: () => unknown): Labeled {
  if (rng.chance(0.25)) return generic(rng);
  const node = schema.anyOf ? rng.pick(schema.anyOf as Schema[]) : schema;
  if ('const' in node) {
    const c = String(node.const);
    return rng.pick([
      { label: 'const upper-cased', value: c.toUpperCase() },
      { label: 'const with NUL', value: `${c}\u0000` },
      { label: 'const with a space', value: ` ${c}` },
    ]);
  }
  switch (node.type) {
    case 'string':
      return hostileString(node, rng, valid);
    case 'integer':
    case 'number':
      return hostileNumber(node, rng);
    case 'array':
      return hostileArray(node, rng, valid);
    case 'object':
      return hostileObject(rng, valid);
    case 'boolean':
      return rng.pick([
        { label: '"true"', value: 'true' },
        { label: '1 for a boolean', value: 1 },
        { label: '"yes"', value: 'yes' },
      ]);
    default:
      return generic(rng);
  }
}

function generic(rng: Rng): Labeled {
  const roll = rng.int(0, 9);
  if (roll === 0) return { label: '10,000 nested arrays', value: BIG.deepArray };
  if (roll === 1) return { label: '10,000 nested objects', value: BIG.deepObject };
  if (roll === 2) return { label: '{"__proto__": …}', value: POISON.proto };
  if (roll === 3) return { label: '{"constructor": {"prototype": …}}', value: POISON.constructorPrototype };
  const [label, value] = rng.pick(WRONG_TYPES);
  return { label: `wrong type: ${label}`, value };
}

function hostileString(node: Schema, rng: Rng, valid: () => unknown): Labeled {
  const roll = rng.int(0, 9);
  if (roll === 0 && node.maxLength !== undefined)
    return { label: `${node.maxLength + 1} chars (max ${node.maxLength})`, value: 'y'.repeat(node.maxLength + 1) };
  if (roll === 1) return { label: '200,000 chars', value: BIG.longString };
  if (roll === 2 && node.format === 'date-time') return { label: 'impossible date', value: rng.pick(DATES) };
  if (roll === 3) {
    const [label, value] = rng.pick(NUMBERS);
    return { label: `number ${label} for a string`, value };
  }
  // Twice as likely as the rest: a NUL in a value that is otherwise valid reaches the database.
  if (roll === 4 || roll === 5) {
    const base = valid();
    if (typeof base === 'string') return { label: 'valid value with NUL appended', value: `${base}\u0000` };
  }
  const [label, value] = rng.pick(STRINGS);
  return { label, value };
}

function hostileNumber(node: Schema, rng: Rng): Labeled {
  const roll = rng.int(0, 5);
  if (roll === 0 && node.minimum !== undefined) return { label: `minimum - 1`, value: node.minimum - 1 };
  if (roll === 1 && node.maximum !== undefined) return { label: `maximum + 1`, value: node.maximum + 1 };
  if (roll === 2 && node.type === 'integer') return { label: '1.5 for an integer', value: 1.5 };
  if (roll === 3) return { label: 'number as a string', value: '5' };
  const [label, value] = rng.pick(NUMBERS);
  return { label, value };
}

function hostileArray(node: Schema, rng: Rng, valid: () => unknown): Labeled {
  const roll = rng.int(0, 6);
  if (roll === 0) return { label: '100,000 {} items', value: BIG.manyObjects };
  if (roll === 1) return { label: '100,000 number items', value: BIG.manyNumbers };
  if (roll === 2) return { label: '10,000 nested arrays', value: BIG.deepArray };
  const items = valid();
  const one = Array.isArray(items) && items.length > 0 ? items[0] : 'fuzz';
  if (roll === 3 && node.maxItems !== undefined && node.maxItems < 5000) {
    return { label: `${node.maxItems + 1} items (max ${node.maxItems})`, value: new Array(node.maxItems + 1).fill(one) };
  }
  if (roll === 4) return { label: 'duplicate items', value: [one, one] };
  if (roll === 5) return { label: '1,000 NUL strings', value: new Array(1000).fill('\u0000') };
  return { label: 'items of the wrong type', value: [1, null, [], {}] };
}

function hostileObject(rng: Rng, valid: () => unknown): Labeled {
  const roll = rng.int(0, 4);
  if (roll === 0) return { label: '{"__proto__": …}', value: POISON.proto };
  if (roll === 1) return { label: '{"constructor": {"prototype": …}}', value: POISON.constructorPrototype };
  if (roll === 2) return { label: '10,000 nested objects', value: BIG.deepObject };
  if (roll === 3) return { label: 'unknown properties', value: { ...(valid() as object), unknownField: 1, 'a.b': 2, '': 3 } };
  return { label: 'empty object', value: {} };
}
