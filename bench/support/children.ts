// The benchmark's processes: the upstream, the bare proxy and the gateway each run
// in a child of their own, so each one's CPU and memory can be read separately
// (/proc/<pid>) and none shares an event loop with the load generator.
//
// Parent side: startChild() spawns `node --import tsx <entry>` with an IPC channel
// and waits for the child's `ready` message. Every child is killed when the parent
// exits, however it exits (normal end, error, Ctrl-C). Child side: announceReady()
// reports the child's address, answers the parent's questions (memory, counters)
// and makes the child exit when its parent is gone, so even a parent killed with
// SIGKILL leaves no orphan behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ChildMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface Child<Info> {
  name: string;
  pid: number;
  info: Info;
  /** process.memoryUsage() as the child sees it (asked over IPC). */
  memory(): Promise<ChildMemory>;
  /** The counters the child chose to expose (announceReady's `stats`), asked over IPC. */
  stats(): Promise<Record<string, number>>;
  /** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildOptions {
  env?: Record<string, string>;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
}

type Question = 'memory' | 'stats';
type Message = { type: 'ready'; info: unknown } | { type: 'answer'; id: number; answer: unknown };

const running = new Set<ChildProcess>();
let exitHooksInstalled = false;

function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  // 'exit' also fires after an uncaught exception or unhandled rejection.
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** `entry` is a module path relative to this folder (e.g. './instant-upstream.ts'). */
export function startChild<Info>(name: string, entry: string, options: ChildOptions = {}): Promise<Child<Info>> {
  installExitHooks();
  const file = fileURLToPath(new URL(entry, import.meta.url));
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', file], {
    // stdout is where the gateway writes its request log: /dev/null here, like a
    // collector that keeps up. stderr stays visible for start-up failures.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...options.env },
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => running.delete(child));

  let nextId = 0;
  const pending = new Map<number, (answer: unknown) => void>();
  child.on('message', (message: Message) => {
    if (message.type === 'answer') {
      pending.get(message.id)?.(message.answer);
      pending.delete(message.id);
    }
  });
  const ask = <T>(question: Question) =>
    new Promise<T>((done, fail) => {
      const id = nextId++;
      const guard = setTimeout(() => {
        pending.delete(id);
        fail(new Error(`${name} did not answer "${question}"`));
      }, 5000);
      pending.set(id, (answer) => {
        clearTimeout(guard);
        done(answer as T);
      });
      child.send({ type: question, id });
    });

  return new Promise<Child<Info>>((resolve, reject) => {
    const timeoutMs = options.readyTimeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
    child.on('message', (message: Message) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve({
        name,
        pid: child.pid!,
        info: message.info as Info,
        memory: () => ask<ChildMemory>('memory'),
        stats: () => ask<Record<string, number>>('stats'),
        async stop(graceMs = 10_000) {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(killer);
        },
      });
    });
  });
}

/** Child side: tell the parent where we are; answer its questions; die with the parent. */
export function announceReady(info: unknown, stats: () => Record<string, number> = () => ({})): void {
  if (!process.send) throw new Error('this module runs as a child of the benchmark (no IPC channel)');
  process.on('message', (message: { type: Question; id: number }) => {
    const answer = message.type === 'memory' ? process.memoryUsage() : stats();
    process.send!({ type: 'answer', id: message.id, answer });
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', info });
}
