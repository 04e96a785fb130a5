// The CLI's end of the running server's control socket (the server's end is
// server/control-server.ts, the protocol server/control-protocol.ts): while a
// server holds the embedded database, commands go to it instead of opening it.
import http from 'node:http';
import { statSync } from 'node:fs';
import {
  CONTROL_COMMAND_PATH,
  CONTROL_TIMEOUT_MS,
  controlSocketPath,
  type ControlAnswer,
  type ControlRequest,
} from '../server/control-protocol.js';

/** The server's answer to a command that failed, carried back to the CLI as an error. */
export class ControlCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown when no server answers on the socket (not started yet, or gone). */
export class ControlUnavailableError extends Error {}

/** Sends one command to the server on `dataDir` and returns its result. */
export async function sendCommand(dataDir: string, command: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const socketPath = controlSocketPath(dataDir);
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(socketPath);
  } catch {
    throw new ControlUnavailableError(`no control socket at ${socketPath}`);
  }
  // Never hand a password to a socket another user could have put there.
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    throw new Error(`${socketPath} belongs to another user (uid ${stat.uid}); refusing to use it.`);
  }
  const body = JSON.stringify({ command, args } satisfies ControlRequest);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = http.request(
      {
        socketPath,
        method: 'POST',
        path: CONTROL_COMMAND_PATH,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.setTimeout(CONTROL_TIMEOUT_MS, () => request.destroy(new Error('The server did not answer within 60 seconds.')));
    request.on('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? new ControlUnavailableError(error.message) : error);
    });
    request.end(body);
  });
  let parsed: ControlAnswer;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`The server answered the control socket with something unexpected (HTTP ${status}).`);
  }
  if (status === 200 && parsed.result) return parsed.result;
  throw new ControlCommandError(parsed.error?.code ?? 'INTERNAL', parsed.error?.message ?? `The server answered HTTP ${status}.`);
}
