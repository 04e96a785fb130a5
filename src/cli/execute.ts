// Where a command runs. The embedded database admits one process: while a server
// holds it, the command goes to that server over its control socket (the server
// runs it on its own connection); otherwise the CLI opens the database itself.
// On PostgreSQL (DATABASE_URL) the CLI always connects directly, like any replica.
import type { Config } from '../platform/config.js';
import { createContext } from '../context.js';
import { openDatabase } from '../platform/db/database.js';
import { lockHolder } from '../platform/db/embedded.js';
import { migrate } from '../platform/db/migrate.js';
import { migrationSummary, runCommand } from './commands.js';
import type { CommandArgs, CommandSpec } from './command-spec.js';
import { controlSocketPath } from '../server/control-protocol.js';
import { ControlUnavailableError, sendCommand } from './control-client.js';

// A server that holds the lock but has no socket yet is still starting (migrating, bootstrapping).
const SERVER_START_WAIT_MS = 30_000;
const RETRY_MS = 200;

export async function executeCommand(
  config: Config,
  spec: CommandSpec,
  args: CommandArgs,
  notice: (line: string) => void,
): Promise<Record<string, unknown>> {
  if (config.databaseUrl) return runDirectly(config, spec, args, notice);
  const deadline = Date.now() + SERVER_START_WAIT_MS;
  for (;;) {
    const holder = lockHolder(config.dataDir);
    if (holder === undefined) {
      try {
        return await runDirectly(config, spec, args, notice);
      } catch (error) {
        // A server took the data dir between our check and our open: go through it instead.
        if (lockHolder(config.dataDir) === undefined || Date.now() > deadline) throw error;
        continue;
      }
    }
    try {
      return await sendCommand(config.dataDir, spec.name, args);
    } catch (error) {
      if (!(error instanceof ControlUnavailableError)) throw error;
      if (Date.now() > deadline) {
        throw new Error(
          `The data dir ${config.dataDir} is held by process ${holder}, which does not answer on ${controlSocketPath(config.dataDir)}. ` +
            'If that is not a Gateway server, stop it; otherwise wait until it has started.',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

async function runDirectly(
  config: Config,
  spec: CommandSpec,
  args: CommandArgs,
  notice: (line: string) => void,
): Promise<Record<string, unknown>> {
  if (spec.name === 'migrate') {
    // Not createContext: it migrates on open, and this command should report what it applied.
    const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 1 });
    try {
      return migrationSummary(await migrate(db, notice));
    } finally {
      await db.close();
    }
  }
  const ctx = await createContext(config, notice);
  try {
    return await runCommand(ctx, spec.name, args);
  } finally {
    await ctx.close();
  }
}
