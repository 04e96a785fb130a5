// An extraction worker: a long-lived thread of the pool in extractor.ts, taking one
// document at a time. It runs with a heap ceiling and under a deadline the pool
// enforces, so a hostile file can cost this thread and nothing else. Parsers run
// here, never on the thread that serves requests, and at a lower CPU priority, so
// a bulk upload leaves the cores to chat traffic.
import { parentPort } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../../../platform/thread-priority.js';
import type { MediaType } from '../documents/media-types.js';
import { chunkBlocks, type ChunkingOptions } from './chunking.js';
import { extractBlocks } from './extract/extract.js';
import { ExtractionError } from './extract/types.js';
import type { ExtractedDocument, WorkerReply } from './extractor.js';

/** One document, sent with its bytes transferred. */
export interface WorkerTask {
  id: number;
  bytes: Uint8Array;
  mediaType: MediaType;
  name: string;
  options: ChunkingOptions & { maxExpandedBytes: number };
}

/** The name a document goes by when it has no title of its own: the file name without folders or extension. */
export function titleFromName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? name;
  return base.replace(/\.[^.]{1,8}$/, '').trim() || base || 'Untitled';
}

async function run({ bytes, mediaType, name, options }: WorkerTask): Promise<ExtractedDocument> {
  const extraction = await extractBlocks(bytes, mediaType, options);
  const title = extraction.title?.replace(/\s+/g, ' ').trim() || titleFromName(name);
  return { title, chunks: chunkBlocks(title, extraction.blocks, options) };
}

function failure(id: number, error: unknown): WorkerReply {
  if (error instanceof ExtractionError) return { id, ok: false, code: error.code, message: error.message, permanent: error.permanent };
  const message = error instanceof Error ? error.message : String(error);
  // A string or buffer past V8's size limits: the document is too big to hold, however often it is tried.
  if (error instanceof RangeError && /allocation|Invalid (string|array|typed array) length/i.test(message)) {
    return { id, ok: false, code: 'out_of_memory', message: `The document is too large to extract (${message}).`, permanent: true };
  }
  // Parsers throw their own errors on input they cannot read; the same bytes would fail again.
  return { id, ok: false, code: 'malformed', message: `The document could not be read (${message}).`, permanent: true };
}

/**
 * Parsers' warnings are not our logs, and may quote document text: they are dropped
 * here rather than piped to the parent (piped stdio would keep the parent process
 * alive while this worker idles, however unref'd).
 */
function silenceOutput(): void {
  const drop = () => {};
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) console[method] = drop;
  for (const stream of [process.stdout, process.stderr]) stream.write = () => true;
}

if (parentPort) {
  const port = parentPort;
  silenceOutput();
  // Messages wait in the port until the listener is there: no document runs before the priority is lowered.
  void lowerThisThreadPriority().then(() =>
    port.on('message', (task: WorkerTask) => {
      run(task).then(
        (document) => port.postMessage({ id: task.id, ok: true, document } satisfies WorkerReply),
        (error: unknown) => port.postMessage(failure(task.id, error)),
      );
    }),
  );
}
