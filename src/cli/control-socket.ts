// The running server's local control socket: how the CLI reaches a server that
// holds the embedded database (PGlite allows one process, and its wire socket one
// connection, which the server's pool keeps). The CLI sends a command from the
// shared table; the server runs it in-process on its own connection and answers
// with the result. Only the same OS user can connect: the socket lives in the
// data dir's run/ directory (0700) and is itself 0600.
import http from 'node:http';
import { chmodSync, lstatSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { embeddedPaths } from '../platform/db/embedded.js';
import { AppError } from '../platform/errors.js';
import { runCommand } from './commands.js';
import type { CommandDeps } from './command-spec.js';

const BODY_LIMIT = 64 * 1024;
const REQUEST_TIMEOUT_MS = 60_000;
const COMMAND_PATH = '/v1/commands';

export function controlSocketPath(dataDir: string): string {
  return path.join(embeddedPaths(dataDir).runDir, 'control.sock');
}

export interface ControlServer {
  path: string;
  close(): Promise<void>;
}

interface ControlLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Serves the command table on `<dataDir>/run/control.sock`. Call it only while
 * holding the data dir's database lock: a leftover socket file is then stale and removed.
 */
export async function startControlServer(deps: CommandDeps, dataDir: string, log: ControlLog): Promise<ControlServer> {
  const socketPath = controlSocketPath(dataDir);
  const runDir = path.dirname(socketPath);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  assertPrivateDirectory(runDir);
  rmSync(socketPath, { force: true });

  const server = http.createServer((request, response) => {
    void handle(deps, log, request, response);
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // run/ is 0700 already, so the moment between listen and chmod exposes nothing.
  chmodSync(socketPath, 0o600);

  return {
    path: socketPath,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      rmSync(socketPath, { force: true });
    },
  };
}

async function handle(deps: CommandDeps, log: ControlLog, request: http.IncomingMessage, response: http.ServerResponse) {
  const reply = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.method !== 'POST' || request.url !== COMMAND_PATH) return reply(404, { error: { code: 'NOT_FOUND', message: 'No such control endpoint.' } });

  let message: { command?: unknown; args?: unknown };
  try {
    message = JSON.parse(await readBody(request));
  } catch (error) {
    return reply(400, { error: { code: 'BAD_REQUEST', message: (error as Error).message } });
  }
  const command = typeof message?.command === 'string' ? message.command : '';
  try {
    const result = await runCommand(deps, command, message.args);
    log.info({ command }, 'control socket command done'); // never the arguments: they carry passwords
    reply(200, { result });
  } catch (error) {
    if (error instanceof AppError) return reply(error.status, { error: { code: error.code, message: error.detail } });
    log.error({ command, err: error }, 'control socket command failed');
    reply(500, { error: { code: 'INTERNAL', message: 'The server could not run the command; see its log.' } });
  }
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new Error('The command is too large.'));
        request.destroy();
      } else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

// The socket's safety rests on its directory: it must be a real directory of ours that nobody else can enter.
function assertPrivateDirectory(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} must be a directory, not a link or file.`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user (uid ${stat.uid}); refusing to open the control socket there.`);
  }
  chmodSync(dir, 0o700);
}

/** The server's answer to a command that failed, carried back to the CLI as an error. */
export class ControlCommandError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** Thrown when no server answers on the socket (not started yet, or gone). */
export class ControlUnavailableError extends Error {}

/** Sends one command to the server on `dataDir` and returns its result. */
export async function sendCommand(dataDir: string, command: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const socketPath = controlSocketPath(dataDir);
  let stat;
  try {
    stat = statSync(socketPath);
  } catch {
    throw new ControlUnavailableError(`no control socket at ${socketPath}`);
  }
  // Never hand a password to a socket another user could have put there.
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    throw new Error(`${socketPath} belongs to another user (uid ${stat.uid}); refusing to use it.`);
  }
  const body = JSON.stringify({ command, args });
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = http.request(
      { socketPath, method: 'POST', path: COMMAND_PATH, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error('The server did not answer within 60 seconds.')));
    request.on('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? new ControlUnavailableError(error.message) : error);
    });
    request.end(body);
  });
  let parsed: { result?: Record<string, unknown>; error?: { code: string; message: string } };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`The server answered the control socket with something unexpected (HTTP ${status}).`);
  }
  if (status === 200 && parsed.result) return parsed.result;
  throw new ControlCommandError(parsed.error?.code ?? 'INTERNAL', parsed.error?.message ?? `The server answered HTTP ${status}.`);
}
