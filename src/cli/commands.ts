// The one command table behind the CLI. Each command is run in-process either by
// the CLI itself (server not running: it opens the database) or by a running
// server that received it on its control socket; the code is the same either way.
// Options are declared once here and drive argument parsing, validation of what
// arrives on the socket, and --help.
import { migrate, type MigrationResult } from '../platform/db/migrate.js';
import { AppError, validation } from '../platform/errors.js';
import { checkArgs, type CommandArgs, type CommandDeps, type CommandSpec } from './command-spec.js';
import { tenantCommands } from './tenants.js';
import { userCommands } from './users.js';
import { keyCommands } from './keys.js';

const migrateCommand: CommandSpec = {
  name: 'migrate',
  summary: 'Apply pending database migrations (a running server applies them at start).',
  options: {},
  async run(deps) {
    return migrationSummary(await migrate(deps.db));
  },
  describe(result) {
    const applied = result.applied as string[];
    const heldBack = result.heldBack as string[];
    const lines = [applied.length ? `Applied ${applied.length} migration(s): ${applied.join(', ')}` : 'The database schema is up to date.'];
    if (heldBack.length) lines.push(`Held back until the pgvector extension is installed: ${heldBack.join(', ')}`);
    return lines;
  },
};

export function migrationSummary(result: MigrationResult): Record<string, unknown> {
  return { applied: result.applied, heldBack: result.heldBack, vector: result.vector };
}

export const COMMANDS: readonly CommandSpec[] = [migrateCommand, ...tenantCommands, ...userCommands, ...keyCommands];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/**
 * Validates `args` against the command's options and runs it. Arguments that
 * arrive over the control socket are checked exactly like parsed ones.
 */
export async function runCommand(deps: CommandDeps, name: string, args: unknown): Promise<Record<string, unknown>> {
  const spec = findCommand(name);
  if (!spec) throw validation('command', `unknown command "${name}"`);
  const checked = prepareArgs(spec, args);
  try {
    return await spec.run(deps, checked);
  } catch (error) {
    throw asOptionError(spec, error);
  }
}

/** Everything that can be checked without the database; the CLI calls it before opening one. */
export function prepareArgs(spec: CommandSpec, args: unknown): CommandArgs {
  const checked = checkArgs(spec, args);
  try {
    spec.check?.(checked);
  } catch (error) {
    throw asOptionError(spec, error);
  }
  return checked;
}

// The services name body fields (`password`); on the command line they are options (`--password`).
function asOptionError(spec: CommandSpec, error: unknown): unknown {
  const field = error instanceof AppError && error.code === 'VALIDATION_FAILED' ? error.extra.errors?.[0] : undefined;
  const option = field?.field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (!field || !option || !(option in spec.options)) return error;
  return validation(`--${option}`, field.message);
}
