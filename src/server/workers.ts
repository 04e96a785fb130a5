// Several processes on one machine (GATEWAY_WORKERS): a primary process forks N
// workers that share the listener through node:cluster (the primary accepts and hands
// connections round-robin), and each worker is a whole gateway, started as a
// single-process one is (server/start.ts). One process is bound by its main thread;
// N workers use N cores.
//
// Workers coordinate exactly as replicas do: on PostgreSQL (the embedded database
// belongs to the one process that holds the data dir), over Redis (REDIS_URL), which
// carries cache invalidation, login throttling and rate limits. Without Redis each
// worker would count those on its own, so N workers would multiply every limit by N.
//
// The primary serves no requests and never opens the database. It starts worker 1
// first and the others once it is serving, so migrations and the first-start bootstrap
// run once, in worker 1, and their messages print once; it restarts a worker that
// dies unexpectedly (backing off, and giving up on a crash loop), and on SIGTERM or
// SIGINT stops the workers gracefully and ends when they have. The control socket
// is not needed: on PostgreSQL the CLI opens the database itself, as any replica does.
import cluster, { type Worker } from 'node:cluster';
import { ConfigError, type Config } from '../platform/config.js';

/** What one worker is told about itself: cluster's id (a replacement gets a new one) and how many serve. */
export interface WorkerIdentity {
  id: number;
  count: number;
}

export interface WorkerPlan {
  /** Processes that will serve: 1 runs the server in this process as ever. */
  workers: number;
  /** A line for the start output when GATEWAY_WORKERS asked for more than can be run. */
  notice?: string;
}

/**
 * How many processes `gateway start` runs. Throws a ConfigError naming REDIS_URL when
 * several workers on PostgreSQL would have no Redis to coordinate over.
 */
export function planWorkers(config: Pick<Config, 'workers' | 'databaseUrl' | 'redisUrl'>): WorkerPlan {
  const n = config.workers;
  if (n <= 1) return { workers: 1 };
  if (!config.databaseUrl)
    return {
      workers: 1,
      notice:
        `GATEWAY_WORKERS=${n}: running one process, as the embedded database (PGlite) belongs to the one process that ` +
        'holds the data dir. Several workers need PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).',
    };
  if (!config.redisUrl)
    throw new ConfigError(
      'REDIS_URL',
      `is required for GATEWAY_WORKERS=${n}: workers coordinate as replicas do, over Redis. Without it each worker would ` +
        `keep its own login throttles, rate limits and key cache: every limit multiplied by ${n}, and a revoked key still ` +
        'accepted by the other workers for minutes.',
    );
  return { workers: n };
}

/** In a worker: who it is. Undefined in a process that is not a cluster worker. */
export function workerIdentity(config: Pick<Config, 'workers'>): WorkerIdentity | undefined {
  return cluster.isWorker && cluster.worker ? { id: cluster.worker.id, count: config.workers } : undefined;
}

const READY = 'gateway-worker-ready';

/** In a worker: tells the primary this worker is serving. */
export function reportReady(): void {
  process.send?.({ type: READY });
}

export interface PrimaryOptions {
  workers: number;
  /** Node flags for the workers: the V8 settings of cli/start-flags.ts travel with them. */
  execArgv: string[];
  print: (line: string) => void;
  /** How long workers take to stop at most: their grace for model calls in flight. */
  shutdownGraceMs: number;
}

// A worker that dies is restarted after 0.5 s, then 1 s, 2 s… up to 30 s while
// deaths keep coming; more than MAX_CRASHES within CRASH_WINDOW_MS is a crash loop
// (a bad deployment, the database gone) better reported to the supervisor by exiting.
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 60_000;
/** As server/start.ts: within this time, a repeated signal is the same stop request delivered twice. */
const SAME_SIGNAL_MS = 500;
/** Beyond the workers' grace for model calls, their own shutdown limit (server/start.ts) and a margin. */
const STOP_MARGIN_MS = 15_000;

/**
 * Runs the primary: forks the workers, supervises them, and resolves with the exit
 * status once they have all ended (0 after a clean stop on a signal, 1 otherwise).
 */
export function runPrimary(options: PrimaryOptions): Promise<number> {
  const { workers: count, print } = options;
  cluster.setupPrimary({ execArgv: options.execArgv });
  print(`Starting ${count} workers (GATEWAY_WORKERS) on one listener; this process (pid ${process.pid}) supervises them.`);

  const live = new Set<Worker>();
  const crashes: number[] = [];
  const restarts = new Set<NodeJS.Timeout>();
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let failed = false;
  let resolveDone: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  const fork = (): Promise<boolean> => {
    const worker = cluster.fork();
    live.add(worker);
    return new Promise((resolve) => {
      let ready = false;
      worker.on('message', (message: { type?: string }) => {
        if (message?.type !== READY || ready) return;
        ready = true;
        resolve(true);
      });
      worker.on('exit', (code, signal) => {
        live.delete(worker);
        if (!ready) resolve(false);
        onExit(worker, code, signal, ready);
      });
    });
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null, wasReady: boolean) => {
    const how = signal ? `signal ${signal}` : `exit status ${code}`;
    if (phase === 'stopping') {
      if (code !== 0) failed = true;
      if (live.size === 0) finish();
      return;
    }
    // While starting, a worker that cannot start is a start that failed: its error is printed already.
    if (phase === 'starting' && !wasReady) {
      failed = true;
      stop(undefined, `Worker ${worker.id} (pid ${worker.process.pid}) could not start (${how}): stopping.`);
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    if (crashes.length > MAX_CRASHES) {
      failed = true;
      stop(undefined, `Workers ended unexpectedly ${crashes.length} times within ${CRASH_WINDOW_MS / 1000} s: stopping.`);
      return;
    }
    const delay = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (crashes.length - 1));
    print(`Worker ${worker.id} (pid ${worker.process.pid}) ended unexpectedly (${how}); starting a replacement in ${delay / 1000} s.`);
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (phase !== 'stopping') void fork();
    }, delay);
    restarts.add(timer);
  };

  const finish = () => {
    for (const signal of SIGNALS) process.off(signal, onSignal);
    print(failed ? 'Workers stopped.' : 'All workers stopped.');
    resolveDone(failed ? 1 : 0);
  };

  // Every worker gets the signal (a terminal's Ctrl-C reaches them directly too: a worker
  // takes the same signal arriving twice at once as one request, see server/start.ts).
  // A repeat here within SAME_SIGNAL_MS is that same request come twice (`gateway start`
  // passes on what the terminal also sent); a later one, or another, is passed on, and
  // makes the workers end at once.
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const stop = (signal: NodeJS.Signals | undefined, reason: string) => {
    if (phase === 'stopping') {
      if (!signal || (first && signal === first.signal && Date.now() - first.at < SAME_SIGNAL_MS)) return;
      for (const worker of live) worker.process.kill(signal);
      return;
    }
    phase = 'stopping';
    if (signal) first = { signal, at: Date.now() };
    print(reason);
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    if (live.size === 0) return finish();
    for (const worker of live) worker.process.kill(signal ?? 'SIGTERM');
    setTimeout(() => {
      print('Workers took too long to stop: ending them.');
      failed = true;
      for (const worker of live) worker.process.kill('SIGKILL');
    }, options.shutdownGraceMs + STOP_MARGIN_MS).unref();
  };
  const onSignal = (signal: NodeJS.Signals) => stop(signal, `Received ${signal}: stopping the workers…`);
  for (const signal of SIGNALS) process.on(signal, onSignal);

  void (async () => {
    // Worker 1 alone first: it migrates the database and creates the first tenant, once.
    if (!(await fork()) || phase !== 'starting') return;
    const others = await Promise.all(Array.from({ length: count - 1 }, () => fork()));
    if (phase !== 'starting' || others.includes(false)) return;
    phase = 'running';
    print(`All ${count} workers are serving (pids ${[...live].map((w) => w.process.pid).join(', ')}).`);
  })();
  return done;
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
