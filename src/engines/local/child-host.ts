// Owns the llama.cpp child process: starts it on demand, routes its messages to
// the requests that are waiting for them, and turns its death (llama.cpp abort,
// OOM kill) into an EngineError for each of them. The next request starts a new one.
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../types.js';
import type { ChildMessage, ParentMessage } from './protocol.js';

export interface ChildListener {
  message(message: ChildMessage): void;
  /** The child is gone; the request will get no more messages. */
  exited(error: EngineError): void;
}

export interface ChildHostOptions {
  startTimeoutMs: number;
  onLog: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Called when the child dies on its own, before the waiting requests are failed. */
  onCrash: (description: string) => void;
}

/** A request as callers write it; the host assigns the id. */
export type Outgoing = ParentMessage extends infer M ? (M extends unknown ? Omit<M, 'id'> : never) : never;

export class ChildHost {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  private nextId = 1;
  private readonly listeners = new Map<number, ChildListener>();
  private readonly recentStderr: string[] = [];
  private closed = false;

  constructor(private readonly options: ChildHostOptions) {}

  /** Sends a request; its messages go to `listener` until `forget(id)` or the child's exit. */
  async open(message: Outgoing, listener: ChildListener, signal?: AbortSignal): Promise<number> {
    const child = await this.start(signal);
    const id = this.nextId++;
    this.listeners.set(id, listener);
    this.keepAlive();
    this.post({ ...message, id } as ParentMessage, child);
    return id;
  }

  /** A request with one answer (`result` or `error`). Aborting sends `abort` and rejects at once. */
  async call<T>(message: Outgoing, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    let id = 0;
    let settled = false;
    let onAbort: () => void = () => {};
    try {
      return await new Promise<T>((resolve, reject) => {
        onAbort = () => {
          if (id) this.post({ op: 'abort', id });
          reject(new EngineError('aborted', 'The request was aborted.'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const listener: ChildListener = {
          message: (m) => {
            if (m.type === 'result') resolve(m.value as T);
            else if (m.type === 'error') reject(new EngineError(m.failure, m.message));
          },
          exited: reject,
        };
        this.open(message, listener, signal).then((opened) => {
          id = opened;
          // Given up while the child was starting: the child need not do the work.
          if (settled) {
            this.post({ op: 'abort', id });
            this.forget(id);
          }
        }, reject);
      });
    } finally {
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (id) this.forget(id);
    }
  }

  /** Fire-and-forget (credits, aborts); dropped when the child is gone. */
  post(message: ParentMessage, child = this.child): void {
    if (!child?.connected) return;
    try {
      child.send(message);
    } catch {
      // The channel closed under us: the exit handler fails the request.
    }
  }

  forget(id: number): void {
    this.listeners.delete(id);
    this.keepAlive();
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child ?? (await this.starting?.catch(() => undefined));
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  }

  /** Resolves once the child runs (starting it if needed). */
  async ready(): Promise<void> {
    await this.start();
  }

  private start(signal?: AbortSignal): Promise<ChildProcess> {
    if (this.closed) return Promise.reject(new EngineError('unreachable', 'The local engine is closed.'));
    if (this.child) return Promise.resolve(this.child);
    this.starting ??= this.spawn().finally(() => (this.starting = undefined));
    if (!signal) return this.starting;
    // A caller giving up does not stop the start: the next request will use the child.
    return Promise.race([
      this.starting,
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(new EngineError('aborted', 'The request was aborted.'));
        signal.addEventListener('abort', () => reject(new EngineError('aborted', 'The request was aborted.')), { once: true });
      }),
    ]);
  }

  private async spawn(): Promise<ChildProcess> {
    const started = performance.now();
    const child = forkChild();
    child.on('error', (error) => this.options.onLog('error', `local engine process: ${error.message}`));
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      (stream as Socket).unref(); // what llama.cpp prints never keeps the gateway running
      createInterface({ input: stream }).on('line', (line) => {
        this.recentStderr.push(line.slice(0, 500));
        if (this.recentStderr.length > 5) this.recentStderr.shift();
        this.options.onLog('warn', `llama.cpp: ${line.slice(0, 2000)}`);
      });
    }
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer in ${this.options.startTimeoutMs} ms`)), this.options.startTimeoutMs);
        child.once('message', () => {
          clearTimeout(timer);
          resolve();
        });
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`it exited (${signal ?? `code ${code}`}): ${this.lastWords()}`));
        });
      });
    } catch (error) {
      child.kill('SIGKILL');
      throw new EngineError('unreachable', `The local engine process did not start: ${(error as Error).message}`, { cause: error });
    }
    if (this.closed) {
      // close() ran while we started: it waits on `starting`, so the child is gone when it returns.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      throw new EngineError('unreachable', 'The local engine is closed.');
    }
    this.options.onLog('info', `local engine process ${child.pid} started in ${Math.round(performance.now() - started)} ms`);
    this.child = child;
    child.on('message', (message: ChildMessage) => {
      if ('id' in message) this.listeners.get(message.id)?.message(message);
    });
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    this.keepAlive();
    return child;
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    const listeners = [...this.listeners.values()];
    this.listeners.clear();
    if (this.closed) {
      const error = new EngineError('unreachable', 'The local engine was closed.');
      for (const listener of listeners) listener.exited(error);
      return;
    }
    const description = `the local engine process exited (${signal ?? `code ${code}`})${this.lastWords() ? `: ${this.lastWords()}` : ''}`;
    this.options.onCrash(description);
    const error = new EngineError('upstream_error', `The request failed because ${description}.`, { retryable: false });
    for (const listener of listeners) listener.exited(error);
  }

  private lastWords(): string {
    return this.recentStderr.slice(-2).join(' | ');
  }

  /** An idle child must not keep the gateway's process alive; a busy one must. */
  private keepAlive(): void {
    const child = this.child;
    if (!child) return;
    if (this.listeners.size > 0) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }
}

// From source (tests, `npm run dev`) the child needs the TypeScript loader; compiled, it does not.
function forkChild(): ChildProcess {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(fromSource ? './child.ts' : './child.js', import.meta.url));
  const execArgv = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
  return fork(entry, [], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'json' });
}
