// Extraction and chunking of uploaded documents, off the request thread, on a pool of
// long-lived worker threads: starting a thread (and, from source, its TypeScript
// loader) costs far more than extracting a typical file, so workers are reused across
// documents. Each still has a heap ceiling, and a document past its deadline has its
// worker stopped and replaced, so a PDF that loops or a zip that explodes costs that
// thread and that document only. Workers idle for a while are closed: an idle server
// holds no extraction memory.
import type { Worker } from 'node:worker_threads';
import type { MediaType } from '../documents/media-types.js';
import type { ChunkInput } from '../chunks/store.js';
import { startWorker } from '../../../platform/worker-thread.js';
import { ExtractionError, type ExtractionCode } from './extract/types.js';
import type { WorkerTask } from './extract-worker.js';

export { ExtractionError, type ExtractionCode } from './extract/types.js';

export interface ExtractorOptions {
  timeoutMs: number;
  maxMemoryMb: number;
  maxExpandedBytes: number;
  chunkTokens: number;
  chunkOverlapTokens: number;
}

export interface PoolOptions extends ExtractorOptions {
  /** Workers at most (GATEWAY_INGEST_CONCURRENCY: one per document in flight). */
  size: number;
  /** A worker with nothing to do for this long is closed. */
  idleMs?: number;
}

export interface ExtractedDocument {
  title: string;
  chunks: ChunkInput[];
}

/** What the worker posts back, once per task. */
export type WorkerReply =
  | { id: number; ok: true; document: ExtractedDocument }
  | { id: number; ok: false; code: ExtractionCode; message: string; permanent: boolean };

const DEFAULT_IDLE_MS = 60_000;

interface Job {
  task: WorkerTask;
  resolve: (document: ExtractedDocument) => void;
  reject: (error: ExtractionError) => void;
}

interface PooledWorker {
  worker: Worker;
  job: Job | undefined;
  deadline: NodeJS.Timeout | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

export class ExtractorPool {
  readonly #options: PoolOptions;
  readonly #workers = new Set<PooledWorker>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: PoolOptions) {
    this.#options = { ...options, size: Math.max(1, options.size) };
  }

  /** Threads alive now, busy or idle (tests and benchmarks watch it). */
  get threads(): Worker[] {
    return [...this.#workers].map((w) => w.worker);
  }

  /**
   * Extracts and chunks one document on a pooled worker, waiting for a free one when
   * all are busy. The bytes are handed to the worker, not copied: when `bytes` spans
   * its whole ArrayBuffer, that buffer is detached (empty) here afterwards.
   * Rejects with an ExtractionError, whose `permanent` says whether a retry could help;
   * a failure that ends the worker (timeout, out of memory, crash) settles once it is gone.
   */
  extract(bytes: Uint8Array, mediaType: MediaType, name: string): Promise<ExtractedDocument> {
    if (this.#closed) return Promise.reject(new ExtractionError('crashed', 'The extractor was closed.', false));
    // A view into a larger buffer (Node's pooled small Buffers) is copied: transferring
    // the pool would detach memory other code is using.
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    const { maxExpandedBytes, chunkTokens, chunkOverlapTokens } = this.#options;
    const task: WorkerTask = {
      id: this.#nextId++,
      bytes: owned ? bytes : bytes.slice(),
      mediaType,
      name,
      options: { maxExpandedBytes, chunkTokens, chunkOverlapTokens },
    };
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, resolve, reject });
      this.#dispatch();
    });
  }

  /** Stops every worker; documents in flight or waiting fail as 'crashed' (retryable). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new ExtractionError('crashed', 'The extractor was closed.', false));
    await Promise.all([...this.#workers].map((w) => this.#retire(w, new ExtractionError('crashed', 'The extractor was closed.', false))));
  }

  /** Gives waiting documents to idle workers, starting new ones up to `size`. */
  #dispatch(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      let free = [...this.#workers].find((w) => !w.job);
      if (!free) {
        if (this.#workers.size >= this.#options.size) return;
        free = this.#spawn();
      }
      this.#run(free, this.#queue.shift() as Job);
    }
  }

  #run(pooled: PooledWorker, job: Job): void {
    clearTimeout(pooled.idleTimer);
    pooled.job = job;
    pooled.worker.ref(); // a document in flight keeps the process alive; an idle worker does not
    const { timeoutMs } = this.#options;
    pooled.deadline = setTimeout(
      () => void this.#retire(pooled, new ExtractionError('timeout', `Extraction took longer than ${timeoutMs} ms and was stopped.`)),
      timeoutMs,
    );
    pooled.worker.postMessage(job.task, [job.task.bytes.buffer as ArrayBuffer]);
  }

  #spawn(): PooledWorker {
    const { maxMemoryMb } = this.#options;
    const worker = startWorker(new URL('./extract-worker.js', import.meta.url), {
      resourceLimits: {
        maxOldGenerationSizeMb: maxMemoryMb,
        maxYoungGenerationSizeMb: Math.max(4, Math.min(64, Math.floor(maxMemoryMb / 8))),
      },
    });
    const pooled: PooledWorker = { worker, job: undefined, deadline: undefined, idleTimer: undefined };
    this.#workers.add(pooled);
    worker.on('message', (reply: WorkerReply) => this.#replied(pooled, reply));
    // `on`, not `once`: an 'error' event with no listener would throw on this thread.
    worker.on('error', (error: Error & { code?: string }) => {
      const failure =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ExtractionError('out_of_memory', `Extraction needed more than ${maxMemoryMb} MB and was stopped.`)
          : new ExtractionError('crashed', `The extraction worker failed: ${error.message}`, false);
      void this.#retire(pooled, failure);
    });
    worker.once('exit', (code) =>
      this.#retire(pooled, new ExtractionError('crashed', `The extraction worker exited (code ${code}) without a result.`, false)),
    );
    return pooled;
  }

  #replied(pooled: PooledWorker, reply: WorkerReply): void {
    const job = pooled.job;
    if (!job || job.task.id !== reply.id) return; // a late answer to a job already settled
    clearTimeout(pooled.deadline);
    pooled.job = undefined;
    if (reply.ok) job.resolve(reply.document);
    else job.reject(new ExtractionError(reply.code, reply.message, reply.permanent));
    this.#idle(pooled);
    this.#dispatch();
  }

  #idle(pooled: PooledWorker): void {
    if (this.#queue.length > 0) return; // #dispatch hands it the next document at once
    pooled.worker.unref();
    pooled.idleTimer = setTimeout(() => void this.#retire(pooled), this.#options.idleMs ?? DEFAULT_IDLE_MS);
    pooled.idleTimer.unref();
  }

  /**
   * Takes a worker out of the pool and stops it; its document, if any, fails with
   * `failure` once the thread is gone (its memory released). Waiting documents get
   * a fresh worker.
   */
  async #retire(pooled: PooledWorker, failure?: ExtractionError): Promise<void> {
    if (!this.#workers.delete(pooled)) return;
    clearTimeout(pooled.deadline);
    clearTimeout(pooled.idleTimer);
    const job = pooled.job;
    pooled.job = undefined;
    await pooled.worker.terminate().catch(() => {});
    if (job) job.reject(failure ?? new ExtractionError('crashed', 'The extraction worker was stopped.', false));
    this.#dispatch();
  }
}

/** One document on a pool of its own, closed afterwards (tests and one-off tools). */
export async function extractDocument(
  bytes: Uint8Array,
  mediaType: MediaType,
  name: string,
  options: ExtractorOptions,
): Promise<ExtractedDocument> {
  const pool = new ExtractorPool({ ...options, size: 1 });
  try {
    return await pool.extract(bytes, mediaType, name);
  } finally {
    await pool.close();
  }
}
