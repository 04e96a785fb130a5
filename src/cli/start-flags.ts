// The V8 settings the server runs with, however it is started: `npm start`,
// `gateway start`, `npx gateway start`. bin/gateway.js re-runs `start` once with the
// flags below when node was started without them; `npm start` relies on the same, so
// the flags live here only (the benchmark reads them from here too).
//
// --max-semi-space-size=64 (MiB; Node 20 defaults to 16): a larger young generation
// means fewer scavenges, and fewer short-lived request objects promoted to the old
// generation. Measured on the chat path (bench/llm-proxy.ts): 16 → 32 MiB saved about
// 14 µs of CPU per request, and took p99 at 1,000 req/s from 14.6 to 5.2 ms in an A/B
// pair; 32 → 64 MiB halved the collections again and lowered p99 in four of five A/B
// pairs (4.8 → 3.4 ms JSON, 5.3 → 4.1 ms streams in the last), for ~50 MiB more RSS
// under load (631 → 680). V8 reads it only when the process starts (v8.setFlagsFromString
// later leaves the young generation as it is), hence a new process rather than a setting.
import { spawn } from 'node:child_process';

export const START_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/**
 * The flags of START_NODE_FLAGS that this node was not started with. A flag counts as
 * given when its name is, whatever the value: an operator's own choice, on node's command
 * line or in NODE_OPTIONS, wins (V8 spells names with - or _ alike).
 */
export function missingStartFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(flagName).filter(Boolean));
  return START_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

function flagName(arg: string): string {
  if (!arg.startsWith('--')) return '';
  return arg.split('=')[0]!.replace(/_/g, '-');
}

/** Signals passed on to the server process: the stops a supervisor or a terminal sends. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/**
 * Runs this same command again in a node started with `flags`, and ends as it ends: the
 * same exit status, or the same signal. Standard input, output and error are the
 * server's own (inherited), and signals sent to this process reach it. The server holds
 * the data dir's lock and control socket under its own process id.
 *
 * A terminal's Ctrl-C (and systemd's stop, which signals every process of the unit)
 * reaches both processes: the server takes a second identical signal arriving at once as
 * the same request (server/start.ts), so a stop stays graceful.
 */
export function rerunWithFlags(flags: readonly string[]): Promise<number> {
  const [, script, ...args] = process.argv;
  const child = spawn(process.execPath, [...process.execArgv, ...flags, script!, ...args], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`error: could not start the server process: ${error.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      // Ended by a signal: end by the same one, so that a supervisor sees what it would have seen.
      if (signal) process.kill(process.pid, signal);
      resolve(code ?? 1);
    });
  });
}
