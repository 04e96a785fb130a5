// Starts the embedded database worker for a data dir and holds the data dir's lock,
// so two processes never open the same PGlite files (that would corrupt them).
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync, closeSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ConfigError } from '../config.js';
import { startWorker } from '../worker-thread.js';

export interface EmbeddedDatabase {
  /** Directory holding the `.s.PGSQL.5432` socket, as `pg` expects for `host`. */
  socketDir: string;
  /** The thread that owns PGlite (exposed so tests can make it die). */
  worker: Worker;
  stop(): Promise<void>;
}

export const EMBEDDED_PORT = 5432;

export function embeddedPaths(dataDir: string) {
  const runDir = path.join(dataDir, 'run');
  return {
    pgdata: path.join(dataDir, 'pgdata'),
    runDir,
    socket: path.join(runDir, `.s.PGSQL.${EMBEDDED_PORT}`),
    lock: path.join(runDir, 'database.lock'),
  };
}

/**
 * `onCrash` runs if the database thread ends without being stopped (a WASM abort,
 * out of memory): nothing can be served after that, so the server exits and lets
 * its supervisor restart it rather than answer every request with an error.
 */
export async function startEmbeddedDatabase(dataDir: string, onCrash?: (error: Error) => void): Promise<EmbeddedDatabase> {
  const paths = embeddedPaths(dataDir);
  // Unix socket paths are limited to 107 bytes; the control socket sits beside this one.
  if (Buffer.byteLength(paths.socket) > 107) {
    throw new ConfigError('GATEWAY_DATA_DIR', `is too long for its sockets (${paths.runDir}); use a path under ~80 characters`);
  }
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  acquireLock(paths.lock);
  rmSync(paths.socket, { force: true });

  const worker = startWorker(new URL('./embedded-worker.js', import.meta.url), {
    workerData: { dataDir: paths.pgdata, socketPath: paths.socket },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`Embedded database worker exited with code ${code}`)));
    });
  } catch (error) {
    releaseLock(paths.lock);
    throw error;
  }
  let stopping = false;
  let failure: Error | undefined;
  worker.on('error', (error) => (failure = error));
  worker.once('exit', (code) => {
    if (stopping) return;
    releaseLock(paths.lock);
    onCrash?.(failure ?? new Error(`The embedded database thread exited unexpectedly (code ${code}).`));
  });

  return {
    socketDir: paths.runDir,
    worker,
    async stop() {
      stopping = true;
      const stopped = new Promise<void>((resolve) => worker.once('message', () => resolve()));
      worker.postMessage({ stop: true });
      await Promise.race([stopped, new Promise((r) => setTimeout(r, 5000).unref())]);
      await worker.terminate();
      releaseLock(paths.lock);
    },
  };
}

/** The pid holding the data dir, or undefined when it is free (a stale lock counts as free). */
export function lockHolder(dataDir: string): number | undefined {
  const lockFile = embeddedPaths(dataDir).lock;
  if (!existsSync(lockFile)) return undefined;
  const pid = Number(readFileSync(lockFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

function acquireLock(lockFile: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = lockHolder(path.dirname(path.dirname(lockFile)));
      if (holder !== undefined) {
        throw new Error(
          `The data dir is in use by process ${holder}. Stop it first, or use the CLI while it runs (it goes through the server).`,
        );
      }
      rmSync(lockFile, { force: true }); // stale lock from a process that is gone
    }
  }
  throw new Error(`Could not lock ${lockFile}`);
}

function releaseLock(lockFile: string): void {
  try {
    if (readFileSync(lockFile, 'utf8').trim() === String(process.pid)) rmSync(lockFile, { force: true });
  } catch {
    // already gone
  }
}
