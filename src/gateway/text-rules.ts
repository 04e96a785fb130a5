// One rule for every string a request carries, in every route's schema, present and
// future: no string may hold a NUL (PostgreSQL cannot store one, and no text means
// it) or a lone surrogate, and one-line values (names, ids, labels) hold no control
// characters at all.
// Each string schema says what kind of text it is with the `text` keyword; the
// edge marks every string that says nothing as `line`, so a new field is strict
// until its schema declares otherwise.
import type { Plugin } from 'ajv';

/**
 * - `line` (the default): names, ids, labels. No control characters (C0, DEL, C1).
 * - `multiline`: descriptions and other prose. Tabs and line breaks (LF, CR) are kept.
 * - `verbatim`: text passed through to a model as written (chat message content).
 *   Anything but NUL, as OpenAI's own API takes it.
 */
export type TextKind = 'line' | 'multiline' | 'verbatim';

// Control characters are what these patterns are about.
/* biome-ignore-start lint/suspicious/noControlCharactersInRegex: on purpose */
const REFUSED: Record<TextKind, { pattern: RegExp; message: string }> = {
  line: { pattern: /[\u0000-\u001f\u007f-\u009f]/, message: 'must not contain control characters' },
  multiline: {
    pattern: /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/,
    message: 'must not contain control characters other than tabs and line breaks',
  },
  verbatim: { pattern: /\u0000/, message: 'must not contain NUL characters' },
};
/* biome-ignore-end lint/suspicious/noControlCharactersInRegex: on purpose */

// A lone UTF-16 surrogate (`"\ud800"` in JSON) is not text in any encoding: PostgreSQL
// refuses it in jsonb and text columns would store U+FFFD instead, changing the value.
const NOT_WELL_FORMED = 'must be well-formed Unicode text (it has a lone surrogate)';
/** Node 20 has `isWellFormed`; the ES2022 type library does not list it yet. */
type WellFormedString = string & { isWellFormed(): boolean };

/** The `text` keyword, added to the Ajv instance that compiles every route's schemas. */
export const textRulePlugin: Plugin<unknown> = (ajv) => {
  ajv.addKeyword({
    keyword: 'text',
    type: 'string',
    schemaType: 'string',
    metaSchema: { enum: Object.keys(REFUSED) },
    compile(kind: TextKind) {
      const { pattern, message } = REFUSED[kind];
      const check = (value: string) => {
        const refused = pattern.test(value);
        if (!refused && (value as WellFormedString).isWellFormed()) return true;
        // Ajv fills in where the value is (instancePath) when it is left out.
        check.errors = [{ keyword: 'text', message: refused ? message : NOT_WELL_FORMED, params: { text: kind } }];
        return false;
      };
      check.errors = [] as unknown[];
      return check as never;
    },
    errors: true,
  });
  return ajv;
};

type Schema = Record<string, unknown>;

/**
 * A copy of a request schema in which every string schema that names no `text`
 * kind is `line`. Literals and enumerations are left alone: their values are ours.
 * Shared schema objects are never modified.
 */
export function withTextRules<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withTextRules) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(schema as Schema)) {
    // Literal values (`const`, `enum`, `default`, `examples`) are data, not schemas.
    copy[key] = key === 'const' || key === 'enum' || key === 'default' || key === 'examples' ? value : withTextRules(value);
  }
  // TypeBox's kind markers are symbols: kept, so the copy is still the same TypeBox schema.
  for (const symbol of Object.getOwnPropertySymbols(schema))
    copy[symbol as unknown as string] = (schema as Record<symbol, unknown>)[symbol];
  if (copy.type === 'string' && copy.text === undefined && copy.const === undefined && copy.enum === undefined) copy.text = 'line';
  return copy as T;
}

/** Route parameters named in a URL (`/workspaces/:workspaceId`), for routes that declare no params schema. */
export function paramsSchemaFor(url: string): Schema | undefined {
  const names = [...url.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
  if (names.length === 0) return undefined;
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])) };
}
