// The `local` engine: GGUF files in a models directory, served by llama.cpp
// (node-llama-cpp) in a child process that is started on first use. A model file
// that crashes llama.cpp takes down only the child: the requests in flight fail,
// the file is remembered as broken (not offered again until it changes), and the
// next request starts a fresh child.
//
// Concurrency: per model, one generation at a time (one context, one sequence,
// FIFO in the child); different models run side by side. Loads go one at a time,
// so a crash while loading names exactly one file.
import type { LookupFunction } from 'node:net';
import {
  EngineError,
  type ChatBatch,
  type ChatRequest,
  type ChatResult,
  type EmbedRequest,
  type Engine,
  type EngineModel,
  type PullProgress,
  type PullRequest,
  type RerankRequest,
  type RerankResult,
  type ToolCall,
} from '../types.js';
import { RequestAbortController } from '../../platform/request-abort.js';
import { ModelCatalog, type ModelFile } from './catalog.js';
import { ChildHost } from './child-host.js';
import { ChatStream, WINDOW } from './chat-stream.js';
import { Mutex } from './mutex.js';
import { planChat } from './options.js';
import type { LoadInfo, LoadPurpose } from './protocol.js';
import { pullModel } from './pull.js';

export interface LocalEngineOptions {
  modelsDir: string;
  threads: number;
  contextSize: number;
  timeoutMs: number;
  pullMaxBytes: number;
  /** Checked for the pull URL and every redirect hop (deny-listed addresses); throws to refuse. Optional. */
  checkUrl?: (url: URL) => Promise<void>;
  /** Name resolution for download connections (the deny-list guard against DNS rebinding). */
  lookup?: LookupFunction;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** Models kept loaded in the child; the least recently used idle one is unloaded beyond this. */
const MAX_LOADED_MODELS = 2;
/** Crashes while serving (not loading) a model before it is taken for broken. */
const CRASHES_BEFORE_BROKEN = 2;

interface Deadline {
  signal: AbortSignal;
  timedOut: () => boolean;
  clear: () => void;
}

interface Loaded {
  file: ModelFile;
  purposes: Set<LoadPurpose>;
  lastUsed: number;
  active: number;
}

export class LocalEngine implements Engine {
  readonly kind = 'local' as const;
  private readonly catalog: ModelCatalog;
  private readonly host: ChildHost;
  private readonly log: NonNullable<LocalEngineOptions['onLog']>;
  /** Models the current child has confirmed loaded, by file key. */
  private readonly loaded = new Map<string, Loaded>();
  private readonly loadLock = new Mutex();
  /** The load in progress in the child (the suspect if it dies now). */
  private loading: ModelFile | undefined;
  private readonly crashes = new Map<string, number>();

  constructor(private readonly options: LocalEngineOptions) {
    this.catalog = new ModelCatalog(options.modelsDir);
    this.log = options.onLog ?? (() => {});
    this.host = new ChildHost({
      startTimeoutMs: Math.max(options.timeoutMs, 30_000),
      onLog: this.log,
      onCrash: (description) => this.crashed(description),
    });
  }

  listModels(_signal: AbortSignal): Promise<EngineModel[]> {
    return this.catalog.list();
  }

  health(_signal: AbortSignal): Promise<void> {
    return this.catalog.ensureDir();
  }

  async chat(request: ChatRequest): Promise<ChatResult> {
    let content = '';
    const toolCalls: ToolCall[] = [];
    for await (const batch of await this.chatStream(request)) {
      for (const chunk of batch) {
        if (chunk.type === 'delta') content += chunk.content;
        else if (chunk.type === 'tool_call') {
          let call = toolCalls[chunk.index];
          if (!call) {
            call = { id: chunk.id ?? '', type: 'function', function: { name: chunk.name ?? '', arguments: '' } };
            toolCalls[chunk.index] = call;
          }
          call.function.arguments += chunk.arguments;
        } else if (chunk.type === 'end') {
          const result: ChatResult = { content, finishReason: chunk.finishReason, usage: chunk.usage };
          if (toolCalls.length > 0) result.toolCalls = toolCalls;
          return result;
        }
      }
    }
    throw new EngineError('upstream_error', 'The local engine ended the generation without a result.');
  }

  async chatStream(request: ChatRequest): Promise<AsyncIterable<ChatBatch>> {
    request.signal.throwIfAborted();
    // llama.cpp reads 0 as "no limit".
    if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1)
      throw new EngineError('rejected', 'maxTokens must be a positive integer.');
    // Before the model is even looked up: a field llama.cpp cannot honour costs nothing.
    const { history, generation } = planChat(request);
    const file = await this.catalog.resolve(request.model);
    const deadline = this.deadline(request.signal);
    try {
      const release = await this.acquire(file, 'chat', deadline);
      const stream = new ChatStream(this.host, request.signal, this.options.timeoutMs, release);
      const { maxTokens, temperature } = request;
      await stream.open(
        { op: 'chat', key: file.key, history, maxTokens, temperature, generation, window: WINDOW },
        deadline.signal,
        deadline.timedOut,
      );
      return stream;
    } finally {
      deadline.clear();
    }
  }

  async embed(request: EmbedRequest): Promise<number[][]> {
    request.signal.throwIfAborted();
    const file = await this.catalog.resolve(request.model);
    const deadline = this.deadline(request.signal);
    try {
      const release = await this.acquire(file, 'embed', deadline);
      try {
        return await this.withSignal(
          this.host.call<number[][]>({ op: 'embed', key: file.key, input: request.input }, deadline.signal),
          deadline.signal,
          deadline.timedOut,
        );
      } finally {
        release();
      }
    } finally {
      deadline.clear();
    }
  }

  /** A GGUF reranker (pooling type rank, a classification head): node-llama-cpp's ranking context, sigmoid scores 0..1. */
  async rerank(request: RerankRequest): Promise<RerankResult> {
    request.signal.throwIfAborted();
    const file = await this.catalog.resolve(request.model);
    const deadline = this.deadline(request.signal);
    try {
      const release = await this.acquire(file, 'rank', deadline);
      try {
        const { query, documents } = request;
        const scores = await this.withSignal(
          this.host.call<number[]>({ op: 'rank', key: file.key, query, documents }, deadline.signal),
          deadline.signal,
          deadline.timedOut,
        );
        return { scores };
      } finally {
        release();
      }
    } finally {
      deadline.clear();
    }
  }

  pull(request: PullRequest): AsyncIterable<PullProgress> {
    return pullModel(request, {
      catalog: this.catalog,
      maxBytes: this.options.pullMaxBytes,
      timeoutMs: this.options.timeoutMs,
      checkUrl: request.guard?.checkUrl ?? this.options.checkUrl,
      lookup: request.guard?.lookup ?? this.options.lookup,
      log: this.log,
      trialLoad: (path, signal) => this.trialLoad(path, signal),
    });
  }

  async close(): Promise<void> {
    await this.host.close();
    this.loaded.clear();
  }

  /**
   * The model loaded for `purpose` and counted as in use (so it is not unloaded
   * under the request); resolves with the release. Waiting is bounded by the
   * deadline, the load itself is not: it always finishes (or crashes the child).
   */
  private async acquire(file: ModelFile, purpose: LoadPurpose, deadline: Deadline): Promise<() => void> {
    const current = this.loaded.get(file.key);
    if (current?.purposes.has(purpose)) return this.use(file);
    const loaded = this.loadLock.run(async () => {
      await this.ensureLoaded(file, purpose);
      return this.use(file); // still under the lock: no eviction in between
    });
    try {
      return await this.withSignal(loaded, deadline.signal, deadline.timedOut);
    } catch (error) {
      loaded.then(
        (release) => release(),
        () => {},
      );
      throw error;
    }
  }

  /** Runs under the load lock. */
  private async ensureLoaded(file: ModelFile, purpose: LoadPurpose): Promise<void> {
    if (this.loaded.get(file.key)?.purposes.has(purpose)) return;
    await this.evict(file);
    await this.host.ready();
    const started = performance.now();
    this.loading = file;
    let info: LoadInfo;
    try {
      info = await this.host.call<LoadInfo>(this.loadMessage(file.key, file.path, purpose), new AbortController().signal);
    } catch (error) {
      // llama.cpp refused the file without crashing: no use offering it again either.
      if (error instanceof EngineError && error.failure === 'model_not_found') this.catalog.markBroken(file, error.message);
      throw error;
    } finally {
      this.loading = undefined;
    }
    const entry = this.loaded.get(file.key) ?? { file, purposes: new Set(), lastUsed: 0, active: 0 };
    entry.purposes.add(purpose);
    entry.lastUsed = performance.now();
    this.loaded.set(file.key, entry);
    this.log(
      'info',
      `local model ${file.id} loaded for ${purpose} in ${Math.round(performance.now() - started)} ms (context ${info.contextSize} tokens${info.threads === undefined ? '' : `, ${info.threads} threads`})`,
    );
  }

  /**
   * What a pull does before offering a file: load it once, in a child of its own,
   * so a file that crashes llama.cpp never takes generations in flight down with it.
   */
  private async trialLoad(path: string, signal: AbortSignal): Promise<void> {
    const host = new ChildHost({
      startTimeoutMs: Math.max(this.options.timeoutMs, 30_000),
      onLog: this.log,
      onCrash: (description) => this.log('warn', `${description} while trial-loading a pulled file; the file is refused`),
    });
    try {
      await host.call<LoadInfo>(this.loadMessage('validate', path, 'validate'), signal);
    } finally {
      await host.close();
    }
  }

  private loadMessage(key: string, path: string, purpose: LoadPurpose) {
    return { op: 'load' as const, key, path, purpose, contextSize: this.options.contextSize, threads: this.options.threads };
  }

  /** Makes room before a load: drops older versions of the same file and the least recently used idle models. */
  private async evict(incoming: ModelFile): Promise<void> {
    const idle = [...this.loaded.values()]
      .filter((e) => e.active === 0 && e.file.key !== incoming.key)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    let excess = this.loaded.size + (this.loaded.has(incoming.key) ? 0 : 1) - MAX_LOADED_MODELS;
    for (const entry of idle) {
      const stale = entry.file.path === incoming.path;
      if (!stale && excess <= 0) continue;
      this.loaded.delete(entry.file.key);
      excess--;
      await this.host.call({ op: 'unload', key: entry.file.key }, new AbortController().signal).catch(() => {});
    }
  }

  /** Counts a request on a loaded model (no unloading under it); returns the release. */
  private use(file: ModelFile): () => void {
    const entry = this.loaded.get(file.key);
    if (entry) entry.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (entry) {
        entry.active--;
        entry.lastUsed = performance.now();
      }
    };
  }

  /** The child died on its own. Blame the file it was loading, or one that keeps crashing it. */
  private crashed(description: string): void {
    const loading = this.loading;
    const busy = [...this.loaded.values()].filter((e) => e.active > 0).map((e) => e.file);
    this.loaded.clear();
    if (loading) {
      this.catalog.markBroken(loading, `loading it crashed llama.cpp (${description})`);
      this.log('error', `${description} while loading model ${loading.id}; it is not offered again until the file changes`);
      return;
    }
    if (busy.length === 1) {
      const file = busy[0]!;
      const count = (this.crashes.get(file.key) ?? 0) + 1;
      this.crashes.set(file.key, count);
      if (count >= CRASHES_BEFORE_BROKEN) this.catalog.markBroken(file, `it crashed llama.cpp ${count} times (${description})`);
    }
    this.log('error', `${description}; requests in flight failed, the next request starts a new process`);
  }

  /** The start phase (queue, load, first token) is bounded by timeoutMs as well as by the caller's signal. */
  private deadline(signal: AbortSignal): Deadline {
    const controller = new RequestAbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      clear: () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      },
    };
  }

  /** Waits for `work` until the signal fires; a fired signal is a timeout or an abort, whatever `work` said. */
  private async withSignal<T>(work: Promise<T>, signal: AbortSignal, timedOut: () => boolean): Promise<T> {
    work.catch(() => {}); // a load we stopped waiting for may still fail; nobody is listening
    let onAbort: () => void = () => {};
    try {
      signal.throwIfAborted();
      const stopped = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return await Promise.race([work, stopped]);
    } catch (error) {
      if (!signal.aborted) throw error;
      throw timedOut()
        ? new EngineError('timeout', `The local engine did not answer within ${this.options.timeoutMs} ms.`)
        : new EngineError('aborted', 'The request was aborted.');
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}
