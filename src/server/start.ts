// Starts the platform: database (migrated), first tenant from the environment,
// TLS, the Gateway on HOST:PORT, and the local control socket the CLI uses while
// the server holds the embedded database. Stops cleanly on SIGINT/SIGTERM.
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from '../platform/config.js';
import { createContext, VERSION, type AppContext } from '../context.js';
import { buildApp } from '../gateway/app.js';
import { loadTls, type TlsMaterial } from '../platform/tls.js';
import { bootstrap, type BootstrapResult } from '../areas/auth/bootstrap.js';
import { controlSocketPath } from './control-protocol.js';
import { startControlServer, type ControlServer } from './control-server.js';
import { lockHolder } from '../platform/db/embedded.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { WorkerIdentity } from './workers.js';
import { stopTracing } from '../platform/tracing.js';
import { modelsNotice } from './models-notice.js';

export interface ServerOptions {
  /** Where request logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /**
   * Where the start-up banner and notices go, one line per call. stderr by
   * default: stdout carries only the JSON log lines, so a log collector reading
   * it never meets a line of text meant for people.
   */
  print?: (line: string) => void;
  /** Install SIGINT/SIGTERM handlers that stop the server and end the process. */
  handleSignals?: boolean;
  /** How the operator invokes the CLI, for the hints in the banner. */
  cliCommand?: string;
  /**
   * The commands the control socket serves: the CLI's command table (cli/main.ts
   * hands in its runCommand; the server does not import the CLI). Without it no
   * control socket is opened, and on the embedded database the CLI cannot reach
   * the data dir while this server runs.
   */
  commands?: (ctx: AppContext, command: string, args: unknown) => Promise<Record<string, unknown>>;
  /**
   * Set in a worker of several (server/workers.ts): its lines carry `[worker N]`, and
   * only the first worker prints the whole banner (the others, their one start line).
   */
  worker?: WorkerIdentity;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  ctx: AppContext;
  tls: TlsMaterial | undefined;
  bootstrap: BootstrapResult;
  /** The control socket's path; undefined on PostgreSQL, where the CLI opens the database itself. */
  controlSocket: string | undefined;
  close(): Promise<void>;
}

/** After the grace period for model calls, this long for the rest (writing pending usage, closing the database) before the process gives up. */
const SHUTDOWN_AFTER_GRACE_MS = 10_000;
/** Within this time, a repeated signal is the same stop request delivered twice (see installSignalHandlers). */
const SAME_SIGNAL_MS = 500;
const CLI_LOCK_WAIT_MS = 15_000;

export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const basePrint = options.print ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { worker } = options;
  const print = worker ? (line: string) => basePrint(line && `[worker ${worker.id}] ${line}`) : basePrint;
  // Certificate problems are configuration problems: report them before touching the database.
  const tls = await loadTls(config);
  if (!config.databaseUrl) await waitForCliToFinish(config.dataDir, print);
  // The process that serves (not a test embedding the server) exits when the
  // embedded database thread dies, so its supervisor restarts it cleanly.
  const onDatabaseCrash = options.handleSignals
    ? (error: Error) => {
        print(`FATAL: ${error.message} Exiting so the service can be restarted.`);
        process.exit(70); // EX_SOFTWARE
      }
    : undefined;
  const ctx = await createContext(config, print, onDatabaseCrash ? { onDatabaseCrash } : {});
  let app: FastifyInstance | undefined;
  let control: ControlServer | undefined;
  let boot: BootstrapResult;
  let url: string;
  try {
    boot = await bootstrap(ctx, config.bootstrap);
    app = await buildApp(ctx, {
      ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}),
      ...(options.logStream ? { logStream: options.logStream } : {}),
    });
    await listen(app, config);
    url = publicUrl(app, config, tls !== undefined);
    // The embedded database admits this process only; the CLI comes in through here.
    const { commands } = options;
    if (ctx.db.kind === 'embedded' && commands)
      control = await startControlServer((command, args) => commands(ctx, command, args), config.dataDir, app.log);
  } catch (error) {
    await app?.close().catch(() => undefined);
    await ctx.close().catch(() => undefined);
    throw error;
  }

  let closing: Promise<void> | undefined;
  const signals = options.handleSignals ? installSignalHandlers(() => running.close(), print, config.http.shutdownGraceMs) : undefined;
  const running: RunningServer = {
    url,
    app,
    ctx,
    tls,
    bootstrap: boot,
    controlSocket: control?.path,
    close() {
      closing ??= (async () => {
        // The signal handlers stay until the end: a signal during the stop is answered
        // by them (a repeat of the one that started it is ignored, another ends the process
        // at once), not by the default action, which would end it without a word.
        try {
          await control?.close();
          await app!.close();
          await ctx.close();
          // Last: the spans of the stop itself (usage written, streams ended) are exported too.
          await stopTracing();
        } finally {
          signals?.remove();
        }
      })();
      return closing;
    },
  };
  const cli = options.cliCommand ?? 'gateway';
  const lines = banner(running, config, cli, worker);
  const whole = !worker || worker.id === 1;
  for (const line of whole ? lines : lines.filter((line) => / is running at /.test(line))) print(line);
  // Once every node's first probe is in (it never rejects): what is served, or how to get a model.
  if (whole)
    void ctx.llm.nodes.ready.then(() => {
      if (closing === undefined) for (const line of modelsNotice(ctx.llm.nodes, cli)) print(line);
    });
  return running;
}

// A CLI command that opened the embedded database directly holds it for a second
// or two; a server holding it has a control socket. Wait out the former only.
async function waitForCliToFinish(dataDir: string, print: (line: string) => void): Promise<void> {
  const deadline = Date.now() + CLI_LOCK_WAIT_MS;
  let holder = lockHolder(dataDir);
  if (holder !== undefined && !existsSync(controlSocketPath(dataDir))) print(`Waiting for process ${holder} to release the data dir…`);
  while (holder !== undefined && !existsSync(controlSocketPath(dataDir)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    holder = lockHolder(dataDir);
  }
  // Still held: createContext reports who holds it.
}

async function listen(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host}:${config.port}`;
    if (code === 'EADDRINUSE') throw new Error(`Cannot listen on ${where}: the port is in use. Choose another with PORT.`);
    if (code === 'EACCES') throw new Error(`Cannot listen on ${where}: permission denied. Choose a PORT above 1023.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new Error(`Cannot listen on ${where}: HOST is not an address of this machine.`);
    throw error;
  }
}

function publicUrl(app: FastifyInstance, config: Config, https: boolean): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // A wildcard listener is reachable on loopback, which is also what the self-signed certificate names.
  let host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  if (host.includes(':')) host = `[${host}]`;
  return `${https ? 'https' : 'http'}://${host}:${port}`;
}

function banner(server: RunningServer, config: Config, cli: string, worker: WorkerIdentity | undefined): string[] {
  const { ctx, tls } = server;
  const which = worker ? ` (worker ${worker.id}, pid ${process.pid}; ${worker.count} workers)` : '';
  const lines = ['', `Gateway ${VERSION} is running at ${server.url}${which}`, `  health:    ${server.url}/health`];
  if (!tls) lines.push('  TLS:       off (GATEWAY_TLS=off): serve behind a TLS-terminating proxy');
  else if (tls.source === 'operator') lines.push(`  TLS:       certificate from ${tls.certFile}`);
  else {
    lines.push(`  TLS:       self-signed certificate ${tls.source === 'generated' ? 'generated' : 'reused'}: ${tls.certFile}`);
    lines.push(`             (trust it in your client, e.g. curl --cacert ${tls.certFile}; SHA-256 ${tls.fingerprint})`);
  }
  const { metrics } = config;
  if (metrics.port !== undefined)
    lines.push(
      `  metrics:   http://${metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host}:${metrics.port}/metrics (its own listener, no credential)`,
    );
  if (metrics.token !== undefined) lines.push(`  metrics:   ${server.url}/metrics (Authorization: Bearer <GATEWAY_METRICS_TOKEN>)`);
  // The certificate names localhost, and the console's refresh cookie is Secure: browse by name.
  const consoleUrl = `${server.url.replace('://127.0.0.1', '://localhost')}/`;
  if (config.console.enabled)
    lines.push(
      existsSync(path.join(config.console.dir, 'index.html'))
        ? `  console:   ${consoleUrl} (sign in there)`
        : '  console:   not built: run "npm run build" (GATEWAY_CONSOLE=off serves the API alone)',
    );
  lines.push(`  data dir:  ${config.dataDir}`);
  lines.push(
    `  database:  ${ctx.db.kind === 'embedded' ? 'embedded PGlite' : `PostgreSQL at ${databaseHost(config.databaseUrl!)}`}; pgvector ${ctx.vector ? 'available' : 'NOT installed'}`,
  );
  const embedder = ctx.os.builtInEmbedder();
  if (embedder && embedder.state !== 'ready')
    lines.push(
      `  embedder:  ${embedder.model} is being prepared in the background (a first start converts its word vectors: 10-30 s);`,
      '             documents wait at stage "preparing_embedder" meanwhile, and /health says when it is ready',
    );
  if (server.controlSocket) lines.push(`  CLI:       ${cli} --help (while this server runs, it goes through ${server.controlSocket})`);
  if (!ctx.vector) lines.push('WARNING: pgvector is not installed: features that need vectors answer 503 until it is.');

  const boot = server.bootstrap;
  if (boot.outcome === 'created') {
    lines.push(
      `Created the first tenant "${boot.tenant.name}" (${boot.tenant.id}) and its administrator "${boot.admin.username}" (${boot.admin.id}).`,
    );
    lines.push('  Sign in at the console, or with POST /api/auth/login. You may now remove GATEWAY_ADMIN_PASSWORD from the environment.');
  } else if (boot.outcome === 'existing' && boot.ignoredVariables.length > 0) {
    lines.push(`Note: ${boot.ignoredVariables.join(', ')} ignored: the database already has tenants, and a start never changes them.`);
  } else if (boot.outcome === 'empty') {
    lines.push(
      'No tenant exists yet. Create the first one and its administrator with the CLI:',
      `  ${cli} tenants create --name "Acme"`,
      `  ${cli} users create --tenant <tenantId> --username admin --email admin@example.com --platform-admin --password-stdin`,
      `  ${cli} keys create --tenant <tenantId> --name "first key"`,
      'or start with GATEWAY_TENANT, GATEWAY_ADMIN_USERNAME and GATEWAY_ADMIN_PASSWORD set.',
    );
  }
  lines.push('');
  return lines;
}

// The URL may hold a password: show where the database is, never how to log in to it.
function databaseHost(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}

function installSignalHandlers(close: () => Promise<void>, print: (line: string) => void, graceMs: number) {
  let stopping: { signal: NodeJS.Signals; at: number } | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // The same signal twice at once is one request that came two ways: a terminal's
      // Ctrl-C (or systemd's stop) reaches both `gateway start` and the server process it
      // runs, and the first passes it on (cli/start-flags.ts). A person's second Ctrl-C comes later.
      if (signal === stopping.signal && Date.now() - stopping.at < SAME_SIGNAL_MS) return;
      print(`Received ${signal} again: exiting now.`);
      process.exit(1);
    }
    stopping = { signal, at: Date.now() };
    print(`Received ${signal}: stopping (model calls in flight get ${graceMs / 1000} s to finish)…`);
    setTimeout(() => {
      print('Shutdown took too long: exiting.');
      process.exit(1);
    }, graceMs + SHUTDOWN_AFTER_GRACE_MS).unref();
    close().then(
      () => {
        print('Stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        print(`Shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    remove() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
