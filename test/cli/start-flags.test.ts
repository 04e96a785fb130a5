// Every documented way to start performs alike: `gateway start` (bin/gateway.js, as
// `npx gateway start` and `npm start` run it) serves from a node started with the V8
// settings of src/cli/start-flags.ts, whatever node it was launched with; and the extra
// step leaves the rest as it was: output, exit status, a graceful stop on SIGTERM or
// Ctrl-C, the data dir's lock and control socket.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lockHolder } from '../../src/platform/db/embedded.js';
import { controlSocketPath } from '../../src/server/control-protocol.js';
import { missingStartFlags, START_NODE_FLAGS } from '../../src/cli/start-flags.js';
import { ON_POSTGRES, REPO_ROOT, freshDataDir, watchOutput, type DataDir } from './helpers.js';

const BIN = path.join(REPO_ROOT, 'bin/gateway.js');
const FLAG = '--max-semi-space-size=64';
const HAS_PROC = existsSync('/proc/self/cmdline');

interface Started {
  pid: number;
  output(): string;
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** The exit status, or the signal that ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<number>();

/** `node [nodeArgs] bin/gateway.js <args>`, with only the environment given (and PATH). */
function runBin(args: string[], env: Record<string, string>, options: { nodeArgs?: string[]; detached?: boolean } = {}): Started {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GATEWAY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a test can signal the group as a terminal's Ctrl-C does.
    detached: options.detached ?? false,
  });
  started.add(child.pid!);
  const watch = watchOutput(child);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      started.delete(child.pid!);
      watch.closed();
      resolve({ code, signal });
    }),
  );
  return { pid: child.pid!, output: watch.output, ended, waitFor: (pattern) => watch.waitFor(pattern) };
}

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The process that serves: the one child running bin/gateway.js, or the process itself when it did not re-run. */
function serverPid(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  const servers = children.filter((child) => {
    try {
      return commandLine(child).includes(BIN);
    } catch {
      return false; // ended meanwhile
    }
  });
  assert.ok(servers.length <= 1, `one server process, got ${servers.join(', ')}`);
  return servers[0] ?? pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the V8 settings of `gateway start`', () => {
  it('are missing unless node was given them, by name, on its command line or in NODE_OPTIONS', () => {
    assert.deepEqual(START_NODE_FLAGS, [FLAG]);
    assert.deepEqual(missingStartFlags([], undefined), [FLAG]);
    assert.deepEqual(missingStartFlags(['--import', 'tsx'], '--enable-source-maps'), [FLAG]);
    assert.deepEqual(missingStartFlags([FLAG], undefined), []);
    // The operator's own value wins, however spelt.
    assert.deepEqual(missingStartFlags(['--max-semi-space-size=32'], undefined), []);
    assert.deepEqual(missingStartFlags([], '--trace-gc --max_semi_space_size=16'), []);
    assert.deepEqual(missingStartFlags(['--max-old-space-size=4096'], ''), [FLAG]);
  });
});

describe('gateway start, as bin/gateway.js runs it', { skip: !HAS_PROC && 'reads /proc (Linux)' }, () => {
  let data: DataDir;
  let env: Record<string, string>;

  before(async () => {
    data = await freshDataDir();
    env = { ...data.env, GATEWAY_TLS: 'off', PORT: '0' };
  });
  after(async () => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await data.remove();
  });

  it('serves from a node started with the flags, and stops cleanly on SIGTERM with status 0', async () => {
    const gateway = runBin(['start'], env);
    const [, url] = await gateway.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/);
    const server = serverPid(gateway.pid);
    assert.notEqual(server, gateway.pid, 'started once more, with the flags');
    assert.ok(commandLine(server).includes(FLAG), commandLine(server).join(' '));
    assert.ok(!commandLine(gateway.pid).includes(FLAG));
    if (!ON_POSTGRES) assert.equal(lockHolder(data.dir), server, 'the server holds the data dir');
    assert.equal((await fetch(`${url}/health`)).status, 200);

    process.kill(gateway.pid, 'SIGTERM');
    assert.deepEqual(await gateway.ended, { code: 0, signal: null });
    assert.equal(gateway.output().match(/Received SIGTERM/g)?.length, 1, gateway.output());
    assert.match(gateway.output(), /Stopped\./);
    assert.equal(alive(server), false);
    if (!ON_POSTGRES) {
      assert.equal(lockHolder(data.dir), undefined);
      assert.equal(existsSync(controlSocketPath(data.dir)), false);
    }
  });

  it("a terminal's Ctrl-C, which reaches both processes, is one graceful stop", async () => {
    const gateway = runBin(['start'], env, { detached: true });
    await gateway.waitFor(/is running at/);
    const server = serverPid(gateway.pid);
    process.kill(-gateway.pid, 'SIGINT'); // the whole process group, as a terminal does
    assert.deepEqual(await gateway.ended, { code: 0, signal: null });
    assert.doesNotMatch(gateway.output(), /again: exiting now/);
    assert.match(gateway.output(), /Stopped\./);
    assert.equal(alive(server), false);
  });

  it('runs no second process when node already has the flag, or the operator chose another value', async () => {
    for (const options of [{ nodeArgs: [FLAG] }, { nodeArgs: ['--max-semi-space-size=32'] }]) {
      const gateway = runBin(['start'], env, options);
      await gateway.waitFor(/is running at/);
      assert.equal(serverPid(gateway.pid), gateway.pid, JSON.stringify(options));
      process.kill(gateway.pid, 'SIGTERM');
      assert.deepEqual(await gateway.ended, { code: 0, signal: null });
    }
    const viaEnv = runBin(['start'], { ...env, NODE_OPTIONS: '--max-semi-space-size=32' });
    await viaEnv.waitFor(/is running at/);
    assert.equal(serverPid(viaEnv.pid), viaEnv.pid);
    process.kill(viaEnv.pid, 'SIGTERM');
    assert.deepEqual(await viaEnv.ended, { code: 0, signal: null });
  });

  it('passes on a failed start: status 1 and the one error line', async () => {
    const gateway = runBin(['start'], { ...env, PORT: 'abc' });
    assert.deepEqual(await gateway.ended, { code: 1, signal: null });
    assert.equal(gateway.output(), 'error: Invalid configuration: PORT must be a whole number, got "abc"\n');
  });

  it('other commands run as before', async () => {
    const gateway = runBin(['--version'], {});
    assert.deepEqual(await gateway.ended, { code: 0, signal: null });
    assert.match(gateway.output(), /^\d+\.\d+\.\d+\n$/);
  });

  // Last: the server dies without cleaning up.
  it('a server ended by a signal ends `gateway start` by the same signal', async () => {
    const gateway = runBin(['start'], env);
    await gateway.waitFor(/is running at/);
    process.kill(serverPid(gateway.pid), 'SIGKILL');
    assert.deepEqual(await gateway.ended, { code: null, signal: 'SIGKILL' });
  });
});
