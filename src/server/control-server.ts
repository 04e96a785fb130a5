// The running server's local control socket: how the CLI reaches a server that
// holds the embedded database (PGlite allows one process, and its wire socket one
// connection, which the server's pool keeps). The CLI sends a command from its
// table (cli/control-client.ts); the server runs it in-process on its own
// connection and answers with the result. Only the same OS user can connect: the
// socket lives in the data dir's run/ directory (0700) and is itself 0600.
//
// The commands themselves are the CLI's: whoever starts the server hands them in
// as `run`, so the server never imports the CLI. The protocol both ends speak is
// control-protocol.ts.
import http from 'node:http';
import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../platform/errors.js';
import { CONTROL_COMMAND_PATH, CONTROL_TIMEOUT_MS, controlSocketPath, type ControlAnswer } from './control-protocol.js';

const BODY_LIMIT = 64 * 1024;

/** Runs one command by name with the arguments as received (it validates them) and returns its result. */
export type RunCommand = (command: string, args: unknown) => Promise<Record<string, unknown>>;

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
export async function startControlServer(run: RunCommand, dataDir: string, log: ControlLog): Promise<ControlServer> {
  const socketPath = controlSocketPath(dataDir);
  const runDir = path.dirname(socketPath);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  assertPrivateDirectory(runDir);
  rmSync(socketPath, { force: true });

  const server = http.createServer((request, response) => {
    void handle(run, log, request, response);
  });
  server.requestTimeout = CONTROL_TIMEOUT_MS;
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

async function handle(run: RunCommand, log: ControlLog, request: http.IncomingMessage, response: http.ServerResponse) {
  const reply = (status: number, body: ControlAnswer) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.method !== 'POST' || request.url !== CONTROL_COMMAND_PATH)
    return reply(404, { error: { code: 'NOT_FOUND', message: 'No such control endpoint.' } });

  let message: { command?: unknown; args?: unknown };
  try {
    message = JSON.parse(await readBody(request));
  } catch (error) {
    return reply(400, { error: { code: 'BAD_REQUEST', message: (error as Error).message } });
  }
  const command = typeof message?.command === 'string' ? message.command : '';
  try {
    const result = await run(command, message.args);
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
