// The local control socket's protocol, shared by its two ends: the running server
// that serves it (server/control-server.ts) and the CLI that sends it commands
// (cli/control-client.ts). It is the server's API, so it lives beside the server
// and the CLI imports it from here; the server never imports the CLI.
//
// One command per request: POST CONTROL_COMMAND_PATH with a JSON ControlRequest;
// the answer is a JSON ControlAnswer, `result` with 200, `error` with any other status.
import path from 'node:path';
import { embeddedPaths } from '../platform/db/embedded.js';

export const CONTROL_COMMAND_PATH = '/v1/commands';

/** How long a command may take: the server's request timeout and the CLI's wait. */
export const CONTROL_TIMEOUT_MS = 60_000;

/** In the data dir's run/ directory (0700); the socket itself is 0600. */
export function controlSocketPath(dataDir: string): string {
  return path.join(embeddedPaths(dataDir).runDir, 'control.sock');
}

export interface ControlRequest {
  /** A command's name as typed on the command line: `tenants create`. */
  command: string;
  args: Record<string, unknown>;
}

export interface ControlAnswer {
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}
