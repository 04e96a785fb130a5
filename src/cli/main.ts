// `gateway`: the operator's command line. `start` runs the server; the other
// commands run from the shared table, either here on the database (no server on
// this data dir, or PostgreSQL) or inside the running server via its control socket.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../platform/config.js';
import { COMMANDS, findCommand, prepareArgs, runCommand } from './commands.js';
import type { CommandArgs, CommandSpec } from './command-spec.js';
import { executeCommand } from './execute.js';
import { VERSION } from '../context.js';
import { modelsCommand, MODELS_USAGE } from './models.js';
import { missingStartFlags } from './start-flags.js';
import { tracingActive, tracingRequested } from '../platform/tracing.js';

const GROUPS = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))];

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const cli = invocation(process.argv[1], process.cwd(), process.env.npm_command);
  try {
    const [first, second] = argv;
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      print(generalHelp(cli));
      return 0;
    }
    if (first === '--version' || first === '-v') {
      print(VERSION);
      return 0;
    }
    if (first === 'start') return await start(argv.slice(1), cli);
    if (first === 'models')
      return await modelsCommand(loadConfig(process.env), argv.slice(1), print, (line) => process.stderr.write(`${line}\n`));

    const spec = findCommand(first) ?? (second !== undefined ? findCommand(`${first} ${second}`) : undefined);
    if (!spec) {
      if (GROUPS.includes(first)) {
        const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
        const help = group.map((c) => commandHelp(c, cli)).join('\n\n');
        if (second === '--help' || second === '-h') {
          print(help);
          return 0;
        }
        if (second === undefined) {
          process.stderr.write(`${help}\n`); // a group alone is an incomplete command
          return 1;
        }
        throw new UsageError(`unknown command "${first} ${second}"; try: ${group.map((c) => c.name).join(', ')}`);
      }
      throw new UsageError(`unknown command "${first}"; run "${cli} --help"`);
    }
    const rest = argv.slice(spec.name.split(' ').length);
    const { args, json, help, passwordFromStdin } = parse(spec, rest, cli);
    if (help) {
      print(commandHelp(spec, cli));
      return 0;
    }
    if (passwordFromStdin) {
      if (args.password !== undefined) throw new UsageError('--password and --password-stdin: use one of them');
      args.password = process.stdin.isTTY ? await promptHidden('Password: ') : await readStdin();
    }
    const config = loadConfig(process.env);
    prepareArgs(spec, args); // fail fast, before a database is opened or a server asked
    const result = await executeCommand(config, spec, args, (line) => process.stderr.write(`${line}\n`));
    print(json ? JSON.stringify(result) : spec.describe(result).join('\n'));
    return 0;
  } catch (error) {
    process.stderr.write(`error: ${oneLine(error)}\n`);
    return 1;
  }
}

async function start(argv: string[], cli: string): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    print(startHelp(cli));
    return 0;
  }
  const config: Config = loadConfig(process.env);
  // Traces start in bin/gateway.js, before this module loads node:http and pg (platform/tracing.ts).
  if (tracingRequested(process.env) && !tracingActive())
    process.stderr.write(
      'warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but traces start only with bin/gateway.js (gateway start, npm start): none from this process.\n',
    );
  // Loaded here, not at the top: the record commands should not pay for the whole server.
  const { planWorkers, reportReady, runPrimary, workerIdentity } = await import('../server/workers.js');
  const worker = workerIdentity(config);
  if (!worker) {
    const plan = planWorkers(config);
    if (plan.notice) process.stderr.write(`${plan.notice}\n`);
    if (plan.workers > 1) {
      // Workers run this command again, with the V8 settings `start` runs with (cli/start-flags.ts).
      const execArgv = [...process.execArgv, ...missingStartFlags(process.execArgv, process.env.NODE_OPTIONS)];
      const print = (line: string) => process.stderr.write(`${line}\n`);
      // A scrape reaching any worker answers with every worker's figures, gathered here.
      if (config.metrics.port !== undefined || config.metrics.token !== undefined)
        (await import('../platform/metrics/cluster.js')).answerWorkerScrapes();
      return runPrimary({ workers: plan.workers, execArgv, print, shutdownGraceMs: config.http.shutdownGraceMs });
    }
  }
  const { startServer } = await import('../server/start.js');
  // The server serves this command table on its control socket while it holds the embedded database.
  await startServer(config, { handleSignals: true, cliCommand: cli, commands: runCommand, ...(worker ? { worker } : {}) });
  if (worker) reportReady();
  return 0;
}

function parse(spec: CommandSpec, argv: string[], cli: string) {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, option] of Object.entries(spec.options)) options[name] = { type: option.type };
  const acceptsPassword = 'password' in spec.options;
  if (acceptsPassword) options['password-stdin'] = { type: 'boolean' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }) as {
      values: Record<string, string | boolean | undefined>;
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split('\n')[0]} (see "${cli} ${spec.name} --help")`);
  }
  const { json, help, 'password-stdin': passwordFromStdin, ...args } = values;
  // Checked here too, so a missing option is reported before any database is opened.
  if (!help) {
    for (const [name, option] of Object.entries(spec.options)) {
      if (option.required && args[name] === undefined && !(name === 'password' && passwordFromStdin)) {
        throw new UsageError(`--${name}: is required (see "${cli} ${spec.name} --help")`);
      }
    }
  }
  return { args: args as CommandArgs, json: json === true, help: help === true, passwordFromStdin: passwordFromStdin === true };
}

// Typed at a terminal: read with echo off, so the password is neither shown nor kept in shell history.
function promptHidden(label: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(label);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003' || char === '\u0004') return done(new UsageError('cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    stdin.on('data', onData);
  });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is the terminator of `echo` or a heredoc, not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function generalHelp(cli: string): string {
  const width = Math.max('start'.length, ...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `Gateway ${VERSION}: multi-tenant AI platform`,
    '',
    `Usage: ${cli} <command> [options]`,
    '',
    'Commands:',
    `  ${'start'.padEnd(width)}Start the server (HTTPS on HOST:PORT, default 127.0.0.1:8443).`,
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    ...MODELS_USAGE.map((line) => `  ${line}`),
    '',
    'Every command takes --help. Commands print for people; --json prints one JSON object instead:',
    'the record, or {"data": [...]} for a list, as the API answers. Lists never show a secret.',
    'The commands work whether or not the server runs: while it runs on the embedded database they go through it.',
    'Ids (ten_…, usr_…, key_…) are printed by each create, and by tenants list, users list and keys list.',
    'Configuration comes from the environment (GATEWAY_DATA_DIR, DATABASE_URL, PORT, HOST, GATEWAY_TLS, …).',
    'Exit status: 0 on success, 1 on any error (one line on stderr).',
  ].join('\n');
}

function commandHelp(spec: CommandSpec, cli: string): string {
  const entries: [string, string][] = Object.entries(spec.options).map(([name, o]) => [
    `--${name}${o.value ? ` ${o.value}` : ''}`,
    `${o.description}${o.required ? ' (required)' : ''}`,
  ]);
  if ('password' in spec.options)
    entries.push(['--password-stdin', 'Read the password from standard input instead (asks for it, hidden, at a terminal).']);
  entries.push(['--json', 'Print the result as one JSON object.']);
  const width = Math.max(...entries.map(([k]) => k.length)) + 2;
  const required = Object.entries(spec.options)
    .filter(([, o]) => o.required)
    .map(([n, o]) => `--${n} ${o.value ?? ''}`.trim());
  return [
    `Usage: ${[cli, spec.name, ...required].join(' ')} [options]`,
    '',
    spec.summary,
    '',
    ...entries.map(([k, d]) => `  ${k.padEnd(width)}${d}`),
  ].join('\n');
}

function startHelp(cli: string): string {
  return [
    `Usage: ${cli} start`,
    '',
    'Starts the Gateway. Settings come from the environment:',
    '  GATEWAY_DATA_DIR   data dir (default ./data): embedded database, TLS certificate, control socket',
    '  DATABASE_URL       use this PostgreSQL server instead of the embedded database',
    '  HOST, PORT         listener (default 127.0.0.1:8443)',
    '  GATEWAY_WORKERS    processes sharing the listener (default 1; auto: one per core); PostgreSQL and REDIS_URL only',
    '  GATEWAY_TLS        on (default: self-signed certificate in the data dir) or off (plain HTTP behind a proxy)',
    '  GATEWAY_TLS_CERT, GATEWAY_TLS_KEY   your own certificate and key files (PEM)',
    '  GATEWAY_TENANT, GATEWAY_ADMIN_USERNAME, GATEWAY_ADMIN_PASSWORD, GATEWAY_ADMIN_EMAIL',
    '                     create the first tenant and its administrator on an empty database',
    '  OTEL_EXPORTER_OTLP_ENDPOINT   export OpenTelemetry traces to this OTLP collector (off when unset;',
    '                     the other standard OTEL_* variables apply)',
  ].join('\n');
}

/** How the user ran us, so hints can be pasted back as they are. */
/**
 * How the operator runs this CLI, for the hints it and the start banner print: the
 * way that works where they are. From a checkout (`npm start`, `node bin/gateway.js`,
 * `npx gateway`) that is `npx gateway`, as the README says; `gateway` itself only when
 * it is on the PATH (npm link, a global install), where `npx gateway` could fetch an
 * unrelated package of that name instead.
 */
export function invocation(script: string | undefined, cwd: string, npmCommand: string | undefined): string {
  if (!script) return 'gateway';
  if (path.basename(script) === 'gateway') return npmCommand === 'exec' ? 'npx gateway' : 'gateway';
  const relative = path.relative(cwd, script) || script;
  if (relative === path.join('bin', 'gateway.js')) return 'npx gateway';
  return script.endsWith('.ts') ? `npx tsx ${relative}` : `node ${relative}`;
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'unknown error';
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

// Run when executed from source (`node --import tsx src/cli/main.ts`); bin/gateway.js calls main() itself.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
