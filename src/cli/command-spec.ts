// What a command is: its options (declared once, they drive argument parsing,
// validation of what arrives on the control socket, and --help), how it runs,
// and how its result reads for a person.
import type { AppContext } from '../context.js';
import { validation } from '../platform/errors.js';

/** What a command may use: the database, the server's secrets and cache bus, and what tenants carry of other areas. */
export type CommandDeps = Pick<AppContext, 'db' | 'secrets' | 'bus' | 'tenantSettings'>;

export interface OptionSpec {
  type: 'string' | 'boolean';
  required?: boolean;
  /** Shown in usage, e.g. `<tenantId>`. */
  value?: string;
  description: string;
}

export type CommandArgs = Record<string, string | boolean | undefined>;

export interface CommandSpec {
  /** As typed on the command line: `tenants create`. */
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Checks that need no database, run before one is opened (or the server is asked). */
  check?(args: CommandArgs): void;
  /** Where the result came from differs (direct or socket); its shape does not. */
  run(deps: CommandDeps, args: CommandArgs): Promise<Record<string, unknown>>;
  /** Human output for the result; --json prints the result itself. */
  describe(result: Record<string, unknown>): string[];
}

export function checkArgs(spec: CommandSpec, args: unknown): CommandArgs {
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args)) throw validation('arguments', 'must be an object of option values');
  const checked: CommandArgs = {};
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    const option = spec.options[key];
    if (!option) throw validation(`--${key}`, `is not an option of "${spec.name}"`);
    if (value === undefined) continue;
    if (typeof value !== option.type) throw validation(`--${key}`, option.type === 'string' ? 'needs a value' : 'takes no value');
    checked[key] = value as string | boolean;
  }
  for (const [key, option] of Object.entries(spec.options)) {
    if (!option.required) continue;
    const value = checked[key];
    if (value === undefined || (typeof value === 'string' && value.trim() === '')) throw validation(`--${key}`, 'is required');
  }
  return checked;
}

/** A string option as given, or undefined. */
export const str = (args: CommandArgs, key: string): string | undefined =>
  typeof args[key] === 'string' ? (args[key] as string) : undefined;

/** `key: value` lines, aligned, skipping absent values. */
export function fields(entries: [string, unknown][]): string[] {
  const present = entries.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const width = Math.max(...present.map(([k]) => k.length)) + 1;
  return present.map(([k, v]) => `  ${`${k}:`.padEnd(width)} ${printable(v)}`);
}

/** One header line and one line per row, columns aligned; an absent value shows as `-`. */
export function table(headers: string[], rows: unknown[][]): string[] {
  const cells = [headers, ...rows.map((row) => row.map((v) => (v === undefined || v === null || v === '' ? '-' : printable(v))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}

/** `2030-01-01T12:00:00.000Z` as `2030-01-01 12:00:00Z`: shorter, still UTC. */
export const timestamp = (iso: unknown): string | undefined =>
  typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : undefined;

// Names come from API callers too, and the API accepts any characters in them: a
// newline would break a listing into false rows, and an escape sequence could
// rewrite the operator's terminal. Control characters are shown escaped instead.
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
function printable(value: unknown): string {
  const text = Array.isArray(value) ? value.join(', ') : String(value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
