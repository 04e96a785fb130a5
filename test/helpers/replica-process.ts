// Gateway replicas as real processes: `gateway start` (the CLI from source, through tsx,
// so a stale dist/ never runs in place of the code under test) on one fresh PostgreSQL
// database and one secret, each with its own port and data dir. A test calls each
// replica directly (no balancer), kills one with SIGKILL, and seeds and inspects the
// shared database through a seeder that does no background work of its own (an
// in-process gateway would be a third replica claiming jobs).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freshDatabase, requestTo, type RequestOptions, type Seedable, type TestResponse } from './gateway.js';
import { TEST_TMP, WORD_VECTORS_FILE } from './paths.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { deriveSecrets } from '../../src/platform/secrets.js';
import { tenantLlmSettings } from '../../src/areas/llm/settings/service.js';
import { CLI, REPO_ROOT, watchOutput } from '../cli/helpers.js';

export interface GatewayProcess {
  /** Its name, also its PostgreSQL application_name (PGAPPNAME): pg_stat_activity tells which replica holds what. */
  name: string;
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** The environment it was started with (the set's, then its own). */
  env: Record<string, string>;
  /** stdout and stderr so far (the banner, then one JSON log line per entry). */
  output(): string;
  /** Resolves with the match once `pattern` shows in the output (rejects when the process ends first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** SIGKILL, as a machine that loses power: nothing is flushed or released. Resolves once it has gone. */
  kill(): Promise<void>;
  /** SIGTERM (an orderly stop), SIGKILL if it is still there after 15 s; removes its data dir. */
  close(): Promise<void>;
}

export interface ReplicaSet extends Seedable {
  /** What every replica of the set is started with: the database, the secret, loopback without TLS. */
  env: Record<string, string>;
  /** The seeder's own connections to the shared database, for seeding and for reading rows in assertions. */
  db: Database;
  /** Starts one more replica (`env` on top of the set's) and waits until it serves. */
  start(env?: Record<string, string>): Promise<GatewayProcess>;
  /** Stops every replica still running, closes the seeder, drops the database. */
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
// A test that fails before its `after` must not leave servers holding ports and the database.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A fresh database (a copy of the migrated template) for replicas to share; PostgreSQL only (TEST_DATABASE_URL). */
export async function startReplicaSet(env: Record<string, string> = {}): Promise<ReplicaSet> {
  if (!process.env.TEST_DATABASE_URL) throw new Error('replica processes need a shared PostgreSQL database (TEST_DATABASE_URL)');
  const seederDir = mkdtempSync(path.join(TEST_TMP, 'replicas-'));
  const database = await freshDatabase(seederDir);
  const shared: Record<string, string> = {
    DATABASE_URL: database.url!,
    GATEWAY_SECRET: randomBytes(32).toString('base64url'),
    GATEWAY_TLS: 'off',
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_WORD_VECTORS_FILE: WORD_VECTORS_FILE,
    GATEWAY_LOG_LEVEL: 'info',
    ...env,
  };
  const config = loadConfig({ ...shared, GATEWAY_DATA_DIR: seederDir });
  const db = await openDatabase({ dataDir: seederDir, databaseUrl: database.url!, poolSize: 4 });
  const started: GatewayProcess[] = [];
  let count = 0;
  return {
    env: shared,
    db,
    ctx: { db, secrets: deriveSecrets(config.secret!), tenantSettings: tenantLlmSettings, config },
    async start(own = {}) {
      const replica = await startGatewayProcess({ PGAPPNAME: `gateway-replica-${++count}`, ...shared, ...own });
      started.push(replica);
      return replica;
    },
    async close() {
      await Promise.all(started.map((replica) => replica.close()));
      await db.close();
      await database.drop();
      rmSync(seederDir, { recursive: true, force: true });
    },
  };
}

/**
 * `gateway start` as a child process with `env` (and a data dir of its own, or `dataDir`,
 * which it then owns and removes on close); resolves once it serves.
 */
export async function startGatewayProcess(env: Record<string, string>, options: { dataDir?: string } = {}): Promise<GatewayProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(TEST_TMP, 'replica-'));
  const full: Record<string, string> = { ...env, GATEWAY_DATA_DIR: dataDir };
  // The parent's own settings must not leak into the child: only what the test gave.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(GATEWAY_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|OTEL_)/.test(k)),
  );
  const child = spawn(process.execPath, [...CLI, 'start'], {
    cwd: REPO_ROOT,
    env: { ...inherited, ...full },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const watch = watchOutput(child);
  const exited = new Promise<void>((resolve) =>
    child.once('close', () => {
      live.delete(child);
      watch.closed();
      resolve();
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async (signal: NodeJS.Signals) => {
    if (!gone()) child.kill(signal);
    await exited;
  };
  let url: string;
  try {
    [, url] = (await watch.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/, 90_000)) as unknown as [string, string];
  } catch (error) {
    await stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    name: full.PGAPPNAME ?? `gateway-${child.pid}`,
    url,
    child,
    dataDir,
    env: full,
    output: watch.output,
    waitFor: watch.waitFor,
    request: (method, requestPath, options) => requestTo(url, method, requestPath, options),
    kill: () => stop('SIGKILL'),
    async close() {
      if (!gone()) {
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await stop('SIGTERM');
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
