// JSON schemas (response_format json_schema, tool parameters) as node-llama-cpp's
// grammar generator reads them. Its generator silently ignores what it does not
// know (a `minimum`, a `pattern`, a `$ref` elsewhere than `#/$defs/`) and then
// constrains the output to something else than the schema says; here every keyword
// is either enforced by the grammar, a pure annotation, or refused by name, so an
// answer we accept always matches the schema the client sent. Checked in the
// gateway, before the child is involved.
import type { GbnfJsonSchema } from 'node-llama-cpp';
import { EngineError } from '../types.js';

type Json = Record<string, unknown>;

/** Keywords that describe and never constrain: kept out of the grammar, accepted. */
const ANNOTATIONS = new Set([
  'title',
  'description',
  '$comment',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
  '$id',
]);
/** What each type's branch of the generator enforces. */
const TYPE_KEYWORDS: Record<string, readonly string[]> = {
  object: ['properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems'],
  string: ['minLength', 'maxLength', 'format'],
  number: [],
  integer: [],
  boolean: [],
  null: [],
};
const STRING_FORMATS = new Set(['date-time', 'time', 'date']);
/** Deeper than any real schema; the generator itself gives up at 512 scopes. */
const MAX_DEPTH = 32;
const MAX_NODES = 5000;

class Refusal extends Error {
  constructor(
    readonly at: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The schema as node-llama-cpp's grammar generator takes it (`anyOf` and type
 * arrays become its `oneOf`; annotations dropped), or EngineError('unsupported')
 * whose message starts with `field` and says what, where, cannot be enforced.
 */
export function toGrammarSchema(schema: unknown, field: string): GbnfJsonSchema {
  const walker = new Walker();
  try {
    return walker.node(schema, '', new Set(), 0) as GbnfJsonSchema;
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const where = error.at === '' ? '' : ` (at ${error.at})`;
    throw new EngineError('unsupported', `${field}: ${error.message}${where}.`);
  }
}

class Walker {
  private nodes = 0;

  node(schema: unknown, at: string, defs: ReadonlySet<string>, depth: number): Json {
    if (++this.nodes > MAX_NODES) throw new Refusal(at, `the local engine accepts schemas of up to ${MAX_NODES} nodes`);
    if (depth > MAX_DEPTH) throw new Refusal(at, `the local engine accepts schemas nested up to ${MAX_DEPTH} levels`);
    if (!isObject(schema)) throw new Refusal(at, 'the local engine needs every schema to be a JSON object');
    const out: Json = {};
    let scope = defs;
    if (schema.$defs !== undefined) {
      if (!isObject(schema.$defs)) throw new Refusal(`${at}/$defs`, '$defs must be an object of schemas');
      scope = new Set([...defs, ...Object.keys(schema.$defs)]);
      const translated: Json = {};
      for (const [name, def] of Object.entries(schema.$defs)) translated[name] = this.node(def, `${at}/$defs/${name}`, scope, depth + 1);
      out.$defs = translated;
    }
    if (typeof schema.description === 'string') out.description = schema.description;
    const keys = Object.keys(schema).filter((k) => k !== '$defs' && !ANNOTATIONS.has(k));

    if (schema.$ref !== undefined) {
      only(keys, ['$ref'], at, '$ref');
      const ref = schema.$ref;
      const name = typeof ref === 'string' && ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : undefined;
      if (name === undefined) throw new Refusal(`${at}/$ref`, 'the local engine resolves only references of the form "#/$defs/<name>"');
      if (!scope.has(name)) throw new Refusal(`${at}/$ref`, `no definition "${name}" in an enclosing $defs`);
      return { ...out, $ref: ref };
    }
    const union = schema.anyOf !== undefined ? 'anyOf' : schema.oneOf !== undefined ? 'oneOf' : undefined;
    if (union) {
      only(keys, [union], at, union);
      const alternatives = schema[union];
      if (!Array.isArray(alternatives) || alternatives.length === 0)
        throw new Refusal(`${at}/${union}`, `${union} must be a non-empty array`);
      // A grammar's alternatives are anyOf's semantics; oneOf's "exactly one" only differs for overlapping alternatives.
      return { ...out, oneOf: alternatives.map((alt, i) => this.node(alt, `${at}/${union}/${i}`, scope, depth + 1)) };
    }
    if (schema.const !== undefined || schema.enum !== undefined) {
      const keyword = schema.const !== undefined ? 'const' : 'enum';
      only(keys, [keyword, 'type'], at, keyword); // the values decide; `type` adds nothing a value could break
      const values = keyword === 'const' ? [schema.const] : schema.enum;
      if (!Array.isArray(values) || values.length === 0) throw new Refusal(`${at}/enum`, 'enum must be a non-empty array');
      if (!values.every(isLiteral))
        throw new Refusal(`${at}/${keyword}`, 'the local engine enforces only string, number, boolean and null values here');
      return keyword === 'const' ? { ...out, const: schema.const } : { ...out, enum: [...values] };
    }
    if (schema.type === undefined) {
      if (keys.length > 0) throw new Refusal(at, `a schema with "${keys[0]}" needs a "type" for the local engine`);
      // {}: any JSON value (the generator alone would allow only null).
      return {
        ...out,
        oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
      };
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length === 0 || !types.every((t) => typeof t === 'string' && t in TYPE_KEYWORDS)) {
      throw new Refusal(`${at}/type`, 'type must be one of object, array, string, number, integer, boolean, null (or an array of them)');
    }
    const allowed = new Set(['type', ...types.flatMap((t) => TYPE_KEYWORDS[t as string]!)]);
    const unknown = keys.find((k) => !allowed.has(k));
    if (unknown !== undefined) throw new Refusal(`${at}/${unknown}`, `the local engine's grammar cannot enforce "${unknown}"`);
    if (types.length === 1) return { ...out, ...this.typed(types[0] as string, schema, at, scope, depth) };
    // Each type's keywords apply to values of that type only: one alternative per type.
    return { ...out, oneOf: (types as string[]).map((t) => this.typed(t, schema, at, scope, depth)) };
  }

  /** One type's branch, with the keywords that apply to it. */
  private typed(type: string, schema: Json, at: string, defs: ReadonlySet<string>, depth: number): Json {
    const out: Json = { type };
    if (type === 'object') {
      const properties = schema.properties ?? {};
      if (!isObject(properties)) throw new Refusal(`${at}/properties`, 'properties must be an object of schemas');
      const names = Object.keys(properties);
      const translated: Json = {};
      for (const name of names) translated[name] = this.node(properties[name], `${at}/properties/${name}`, defs, depth + 1);
      if (names.length > 0) out.properties = translated;
      const extra = schema.additionalProperties;
      if (extra !== undefined && typeof extra !== 'boolean')
        out.additionalProperties = this.node(extra, `${at}/additionalProperties`, defs, depth + 1);
      else if (extra === true) out.additionalProperties = true;
      // The generator writes every listed property; extra ones only where additionalProperties allows.
      if (schema.required !== undefined) {
        if (!Array.isArray(schema.required) || !schema.required.every((r) => typeof r === 'string')) {
          throw new Refusal(`${at}/required`, 'required must be an array of property names');
        }
        const missing = schema.required.find((r) => !Object.hasOwn(translated, r));
        if (missing !== undefined) throw new Refusal(`${at}/required`, `"${missing}" is required but not among the properties`);
      }
      const min = count(schema, 'minProperties', at);
      const max = count(schema, 'maxProperties', at);
      if (max !== undefined && max < names.length)
        throw new Refusal(`${at}/maxProperties`, 'the local engine always writes every listed property');
      if (min !== undefined && min > names.length && out.additionalProperties === undefined) {
        throw new Refusal(`${at}/minProperties`, 'more properties than are listed, with no additionalProperties');
      }
      if (min !== undefined) out.minProperties = min;
      if (max !== undefined) out.maxProperties = max;
    } else if (type === 'array') {
      if (schema.items !== undefined) out.items = this.node(schema.items, `${at}/items`, defs, depth + 1);
      if (schema.prefixItems !== undefined) {
        if (!Array.isArray(schema.prefixItems)) throw new Refusal(`${at}/prefixItems`, 'prefixItems must be an array of schemas');
        out.prefixItems = schema.prefixItems.map((item, i) => this.node(item, `${at}/prefixItems/${i}`, defs, depth + 1));
      }
      const min = count(schema, 'minItems', at);
      const max = count(schema, 'maxItems', at);
      const prefix = Array.isArray(out.prefixItems) ? out.prefixItems.length : 0;
      if (max !== undefined && (max < prefix || (min !== undefined && max < min))) {
        throw new Refusal(`${at}/maxItems`, 'maxItems is below minItems or the prefixItems');
      }
      if (min !== undefined) out.minItems = min;
      if (max !== undefined) out.maxItems = max;
    } else if (type === 'string') {
      const min = count(schema, 'minLength', at);
      const max = count(schema, 'maxLength', at);
      if (schema.format !== undefined) {
        if (typeof schema.format !== 'string' || !STRING_FORMATS.has(schema.format)) {
          throw new Refusal(`${at}/format`, 'the local engine enforces only the formats date-time, time and date');
        }
        if (min !== undefined || max !== undefined)
          throw new Refusal(`${at}/format`, 'the local engine cannot combine format with a length');
        out.format = schema.format;
      }
      if (max !== undefined && min !== undefined && max < min) throw new Refusal(`${at}/maxLength`, 'maxLength is below minLength');
      if (min !== undefined) out.minLength = min;
      if (max !== undefined) out.maxLength = max;
    }
    return out;
  }
}

function only(keys: string[], allowed: string[], at: string, beside: string): void {
  const other = keys.find((k) => !allowed.includes(k));
  if (other !== undefined) throw new Refusal(`${at}/${other}`, `the local engine cannot enforce "${other}" beside "${beside}"`);
}

function count(schema: Json, key: string, at: string): number | undefined {
  const value = schema[key];
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Refusal(`${at}/${key}`, `${key} must be a non-negative integer`);
  return value as number;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLiteral(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}
