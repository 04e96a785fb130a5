// What a command is: its options (declared once, they drive argument parsing,
// validation of what arrives on the control socket, and --help), how it runs,
// and how its result reads for a person.
import type { AppContext } from '../context.js';
import { validation } from '../platform/errors.js';

/** What a command may use: the database and the server's secrets and cache bus. */
export type CommandDeps = Pick<AppContext, 'db' | 'secrets' | 'bus'>;

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
export const str = (args: CommandArgs, key: string): string | undefined => (typeof args[key] === 'string' ? (args[key] as string) : undefined);

/** `key: value` lines, aligned, skipping absent values. */
export function fields(entries: [string, unknown][]): string[] {
  const present = entries.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const width = Math.max(...present.map(([k]) => k.length)) + 1;
  return present.map(([k, v]) => `  ${`${k}:`.padEnd(width)} ${Array.isArray(v) ? v.join(', ') : String(v)}`);
}
