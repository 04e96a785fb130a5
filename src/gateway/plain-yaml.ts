// JSON data as block-style YAML, for /docs/yaml. The `yaml` package that
// @fastify/swagger uses builds a whole document tree first: 0.25–0.7 s of event loop
// for the 876 KB API document. This writer only walks the data (objects, arrays,
// strings, numbers, booleans, null: what JSON.parse can give), in ~1/20 of the time.
// A string is written plain only when no YAML reader could take it for anything
// else; every other one is double-quoted, which YAML reads with JSON's escapes.

// Plain only: starts with a letter, `/` or `_`, holds no `: `, ` #`, quote, bracket or flow character.
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_ ./()@+=-]*$/;
// Words YAML 1.1 or 1.2 readers turn into booleans or null.
const RESERVED = /^(?:true|false|null|yes|no|on|off|y|n)$/i;
// JSON.stringify leaves these unescaped: YAML does not allow them raw, or (YAML 1.1) reads them as line breaks.
const NOT_PRINTABLE =
  /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` (JSON data) as a YAML document, ending with a newline. */
export function toPlainYaml(value: unknown): string {
  const lines: string[] = [];
  if (isEmptyOrScalar(value)) lines.push(inline(value));
  else write(value as object, '', lines);
  return `${lines.join('\n')}\n`;
}

function write(value: object, indent: string, lines: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isEmptyOrScalar(item)) lines.push(`${indent}- ${inline(item)}`);
      else {
        // The item's first line goes after the dash: `- key: value`, its others under it.
        const start = lines.length;
        write(item as object, `${indent}  `, lines);
        lines[start] = `${indent}- ${lines[start]!.slice(indent.length + 2)}`;
      }
    }
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (isEmptyOrScalar(item)) lines.push(`${indent}${scalar(key)}: ${inline(item)}`);
    else {
      lines.push(`${indent}${scalar(key)}:`);
      write(item as object, `${indent}  `, lines);
    }
  }
}

function isEmptyOrScalar(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Array.isArray(value) ? value.length === 0 : Object.values(value).every((v) => v === undefined);
}

function inline(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return '[]';
  if (typeof value === 'object') return '{}';
  if (typeof value === 'string') return scalar(value);
  // Numbers and booleans read back the same; a non-finite number is null, as in JSON.
  return typeof value === 'number' && !Number.isFinite(value) ? 'null' : String(value);
}

function scalar(text: string): string {
  if (PLAIN.test(text) && !text.endsWith(' ') && !RESERVED.test(text)) return text;
  return JSON.stringify(text).replace(NOT_PRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
