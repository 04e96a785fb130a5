// Extraction and chunking of one uploaded document, off the request thread: each
// document gets a fresh worker thread with a heap ceiling, stopped at a deadline,
// so a PDF that loops or a zip that explodes costs that thread only.
import type { MediaType } from '../documents/media-types.js';
import type { ChunkInput } from '../chunks/store.js';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../../platform/worker-thread.js';
import { ExtractionError, type ExtractionCode } from './extract/types.js';
import type { WorkerInput } from './extract-worker.js';

export { ExtractionError, type ExtractionCode } from './extract/types.js';

export interface ExtractorOptions {
  timeoutMs: number;
  maxMemoryMb: number;
  maxExpandedBytes: number;
  chunkTokens: number;
  chunkOverlapTokens: number;
}

export interface ExtractedDocument {
  title: string;
  chunks: ChunkInput[];
}

/** What the worker posts back, once. */
export type WorkerReply =
  | { ok: true; document: ExtractedDocument }
  | { ok: false; code: ExtractionCode; message: string; permanent: boolean };

/**
 * Runs extraction + chunking of one document in a fresh worker thread (resourceLimits
 * from maxMemoryMb; terminated at timeoutMs). Settles only once the worker is gone.
 * The bytes are handed to the worker, not copied: when `bytes` spans its whole
 * ArrayBuffer, that buffer is detached (empty) here afterwards.
 * Rejects with an ExtractionError, whose `permanent` says whether a retry could help.
 */
export function extractDocument(
  bytes: Uint8Array,
  mediaType: MediaType,
  name: string,
  options: ExtractorOptions,
): Promise<ExtractedDocument> {
  return startExtraction(bytes, mediaType, name, options).result;
}

/** extractDocument, with the worker it runs on (tests watch it end). */
export function startExtraction(
  bytes: Uint8Array,
  mediaType: MediaType,
  name: string,
  options: ExtractorOptions,
): { worker: Worker; result: Promise<ExtractedDocument> } {
  // A view into a larger buffer (Node's pooled small Buffers) is copied: transferring
  // the pool would detach memory other code is using.
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  const data = owned ? bytes : bytes.slice();
  const input: WorkerInput = {
    bytes: data,
    mediaType,
    name,
    options: {
      maxExpandedBytes: options.maxExpandedBytes,
      chunkTokens: options.chunkTokens,
      chunkOverlapTokens: options.chunkOverlapTokens,
    },
  };
  const worker = startWorker(new URL('./extract-worker.js', import.meta.url), {
    workerData: input,
    transferList: [data.buffer as ArrayBuffer],
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxMemoryMb,
      maxYoungGenerationSizeMb: Math.max(4, Math.min(64, Math.floor(options.maxMemoryMb / 8))),
    },
    // Parsers' warnings are not our logs, and may quote document text.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  const result = new Promise<ExtractedDocument>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: { document: ExtractedDocument } | { error: ExtractionError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      const answer = () => ('document' in outcome ? resolve(outcome.document) : reject(outcome.error));
      worker.terminate().then(answer, answer);
    };
    const deadline = setTimeout(
      () => settle({ error: new ExtractionError('timeout', `Extraction took longer than ${options.timeoutMs} ms and was stopped.`) }),
      options.timeoutMs,
    );
    worker.once('message', (reply: WorkerReply) => {
      if (reply.ok) settle({ document: reply.document });
      else settle({ error: new ExtractionError(reply.code, reply.message, reply.permanent) });
    });
    // `on`, not `once`: an 'error' event with no listener would throw on this thread.
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        settle({ error: new ExtractionError('out_of_memory', `Extraction needed more than ${options.maxMemoryMb} MB and was stopped.`) });
      } else {
        settle({ error: new ExtractionError('crashed', `The extraction worker failed: ${error.message}`, false) });
      }
    });
    worker.once('exit', (code) =>
      settle({ error: new ExtractionError('crashed', `The extraction worker exited (code ${code}) without a result.`, false) }),
    );
  });
  return { worker, result };
}
