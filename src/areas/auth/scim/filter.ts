// The filters this service provider answers (RFC 7644 §3.4.2.2, a deliberate subset):
// `<attribute> eq "<string>"` on the attributes a provisioning client looks resources
// up by, joined by `and`. Anything else (another operator, `or`, `not`, parentheses, a
// value that is not a string, an attribute not on the list) is 400 invalidFilter, never
// the unfiltered list. Attribute names and operators are case-insensitive; values are
// JSON strings. Whether a value compares case-insensitively is the attribute's
// `caseExact` (userName, emails.value, displayName: no; externalId: yes), applied in SQL.
import { invalidFilter } from './errors.js';
import { SCIM_LIMITS } from './protocol.js';

export interface FilterTerm<A extends string> {
  attribute: A;
  value: string;
}

/** Tokens of a filter: a JSON string, a parenthesis or bracket, or a run of anything else. */
const TOKEN = /\s*(?:("(?:[^"\\]|\\.)*")|([()[\]])|([^\s"()[\]]+))/y;

function tokens(filter: string): { text: string; quoted: boolean }[] {
  const found: { text: string; quoted: boolean }[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < filter.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(filter);
    if (!match || match[0].length === 0) {
      if (filter.slice(at).trim() === '') break;
      throw invalidFilter(`The filter cannot be read at character ${at + 1} (an unterminated string?).`);
    }
    if (match[1] !== undefined) found.push({ text: match[1], quoted: true });
    else if (match[2] !== undefined) found.push({ text: match[2], quoted: false });
    else if (match[3] !== undefined) found.push({ text: match[3], quoted: false });
  }
  return found;
}

/** One `attribute eq value` of a filter, as written: the value is a JSON literal (string, boolean, number or null). */
export interface Comparison {
  attribute: string;
  value: unknown;
}

const SUPPORTED_NOTE = 'Comparisons are attribute eq value, joined by "and".';

/** The comparisons of `filter` (eq only, joined by and); throws invalidFilter for anything else. */
export function comparisons(filter: string): Comparison[] {
  if (filter.length > SCIM_LIMITS.maxFilterLength)
    throw invalidFilter(`The filter is longer than ${SCIM_LIMITS.maxFilterLength} characters.`);
  const list = tokens(filter);
  if (list.length === 0) throw invalidFilter('The filter is empty.');
  const found: Comparison[] = [];
  for (let i = 0; ; i += 4) {
    const [attr, op, value, next] = [list[i], list[i + 1], list[i + 2], list[i + 3]];
    if (!attr || !op || !value || attr.quoted || op.quoted || /^[()[\]]$/.test(attr.text) || /^[()[\]]$/.test(value.text))
      throw invalidFilter(`The filter is not of the form attribute eq value. ${SUPPORTED_NOTE}`);
    if (op.text.toLowerCase() !== 'eq') throw invalidFilter(`The operator "${op.text.slice(0, 20)}" is not supported. ${SUPPORTED_NOTE}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.quoted ? value.text : value.text.toLowerCase());
    } catch {
      throw invalidFilter(`"${value.text.slice(0, 40)}" is not a value: a string in double quotes, true, false, null or a number.`);
    }
    found.push({ attribute: attr.text, value: parsed });
    if (!next) return found;
    if (next.quoted || next.text.toLowerCase() !== 'and') throw invalidFilter(`Only "and" may join comparisons. ${SUPPORTED_NOTE}`);
    if (found.length >= 10) throw invalidFilter('A filter holds at most 10 comparisons.');
  }
}

/**
 * Parses a list filter against `attributes` (their canonical names; a name may be
 * written in any case, and with its schema URN in front, `urn:…:User:userName`), each
 * compared with a string. Throws invalidFilter.
 */
export function parseFilter<A extends string>(filter: string, attributes: readonly A[], schemaUrn: string): FilterTerm<A>[] {
  const supported = `Supported: ${attributes.map((a) => `${a} eq "…"`).join(', ')}, joined by "and".`;
  return comparisons(filter).map(({ attribute: written, value }) => {
    const attribute = attributeNamed(written, attributes, schemaUrn);
    if (!attribute) throw invalidFilter(`Filtering on "${written.slice(0, 100)}" is not supported. ${supported}`);
    if (typeof value !== 'string') throw invalidFilter(`${attribute} is compared with a string in double quotes. ${supported}`);
    return { attribute, value };
  });
}

function attributeNamed<A extends string>(written: string, attributes: readonly A[], schemaUrn: string): A | undefined {
  const prefix = `${schemaUrn}:`.toLowerCase();
  const lower = written.toLowerCase();
  const name = lower.startsWith(prefix) ? lower.slice(prefix.length) : lower;
  return attributes.find((a) => a.toLowerCase() === name);
}
