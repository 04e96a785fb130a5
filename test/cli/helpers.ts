// Shared by the CLI and server tests: a data dir copied from the migrated
// template, the real CLI run as a child process, an in-process server, and an
// HTTPS client that trusts the server's self-signed certificate.
import { after } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { freshDatabase } from '../helpers/gateway.js';
import { TEST_TMP, WORD_VECTORS_FILE } from '../helpers/paths.js';
import { loadConfig } from '../../src/platform/config.js';
import { startServer, type RunningServer } from '../../src/server/start.js';
import { runCommand } from '../../src/cli/commands.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts')];
/** True when the suite runs against a PostgreSQL server: the embedded-only cases are skipped. */
export const ON_POSTGRES = Boolean(process.env.TEST_DATABASE_URL);

export interface DataDir {
  dir: string;
  /** The environment that points a server or the CLI at this database. */
  env: Record<string, string>;
  remove(): Promise<void>;
}

/** A private data dir whose database is a copy of the migrated template. */
export async function freshDataDir(): Promise<DataDir> {
  const dir = mkdtempSync(path.join(TEST_TMP, 'cli-'));
  const database = await freshDatabase(dir);
  return {
    dir,
    // The shared converted word vectors: a server started here prepares its built-in embedder at once.
    env: { GATEWAY_DATA_DIR: dir, GATEWAY_WORD_VECTORS_FILE: WORD_VECTORS_FILE, ...(database.url ? { DATABASE_URL: database.url } : {}) },
    async remove() {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For a suite that needs several data dirs: returns a `fresh()` that makes one
 * (as freshDataDir does) and registers their removal after the suite.
 */
export function dataDirsForSuite(): () => Promise<DataDir> {
  const dirs: DataDir[] = [];
  after(async () => {
    for (const data of dirs) await data.remove();
  });
  return async () => {
    const data = await freshDataDir();
    dirs.push(data);
    return data;
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// The parent's GATEWAY_*, DATABASE_URL, PORT and HOST must not leak into a child.
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GATEWAY_|DATABASE_URL$|PORT$|HOST$)/.test(k)));
  return { ...clean, GATEWAY_LOG_LEVEL: 'warn', ...env };
}

const children = new Set<ChildProcess>();

/** Runs `gateway <args>` from source and waits for it (killed after `timeoutMs`). */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], { cwd: REPO_ROOT, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Runs the CLI with --json and returns the parsed record; fails loudly otherwise. */
export async function cliJson(args: string[], env: Record<string, string>, input?: string): Promise<Record<string, any>> {
  const result = await runCli([...args, '--json'], env, input !== undefined ? { input } : {});
  if (result.code !== 0) throw new Error(`gateway ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${result.stdout}`);
  return JSON.parse(lines[0]!);
}

export interface StartedProcess {
  child: ChildProcess;
  /** stdout and stderr together, in the order they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the text that matched, or rejects when the process ends or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/** A child's output as it arrives, and waits for a pattern in it (which fail when the child ends first). */
export interface OutputWatch {
  /** stdout and stderr together, in the order they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Re-checks the waits: call it when the child closes. */
  closed(): void;
}

export function watchOutput(child: ChildProcess): OutputWatch {
  let output = '';
  const streams = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  const onData = (stream: keyof typeof streams) => (chunk: Buffer) => {
    output += chunk;
    streams[stream] += chunk;
    for (const check of waiters) check();
  };
  child.stdout!.on('data', onData('stdout'));
  child.stderr!.on('data', onData('stderr'));
  return {
    output: () => output,
    stdout: () => streams.stdout,
    stderr: () => streams.stderr,
    closed: () => {
      for (const check of waiters) check();
    },
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`timed out waiting for ${pattern}; output:\n${output}`)), timeoutMs);
        const check = () => {
          const match = output.match(pattern);
          if (match) finish(undefined, match);
          else if (child.exitCode !== null || child.signalCode !== null)
            finish(new Error(`process ended before ${pattern}; output:\n${output}`));
        };
        const finish = (error?: Error, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve(match!);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** `gateway start` as a child process. */
export function startCliServer(env: Record<string, string>): StartedProcess {
  const child = spawn(process.execPath, [...CLI, 'start'], { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const watch = watchOutput(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      watch.closed();
      resolve(code);
    }),
  );
  return { child, output: watch.output, stdout: watch.stdout, stderr: watch.stderr, waitFor: watch.waitFor, exited };
}

/** Kills every child a test started and has not seen end; call it in `after`. */
export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}

export interface InProcessServer {
  server: RunningServer;
  /** Banner lines. */
  printed: string[];
  /** Request log lines. */
  logs(): string;
}

/** startServer in this process on an ephemeral port, its banner and logs captured; its control socket serves the CLI's commands, as under `gateway start`. */
export async function startInProcess(env: Record<string, string>): Promise<InProcessServer> {
  const printed: string[] = [];
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({ PORT: '0', GATEWAY_LOG_LEVEL: 'info', ...env });
  const server = await startServer(config, { print: (line) => printed.push(line), logStream, commands: runCommand });
  return { server, printed, logs: () => lines.join('') };
}

export interface HttpResult {
  status: number;
  body: any;
  text: string;
}

/** One HTTP(S) request; for HTTPS, `ca` is the certificate to trust (the self-signed one). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; json?: unknown; ca?: string } = {},
): Promise<HttpResult> {
  const target = new URL(url);
  const body = options.json !== undefined ? JSON.stringify(options.json) : undefined;
  const headers = { ...options.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      target,
      { method: options.method ?? 'GET', headers, ...(options.ca ? { ca: options.ca } : {}), timeout: 15_000 },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
