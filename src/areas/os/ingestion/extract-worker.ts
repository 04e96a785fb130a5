// The extraction worker: one document, then the thread ends. Started by extractor.ts
// with a heap ceiling and a deadline, so a hostile file can cost this thread and
// nothing else. Parsers run here, never on the thread that serves requests.
import { parentPort, workerData } from 'node:worker_threads';
import type { MediaType } from '../documents/media-types.js';
import { chunkBlocks, type ChunkingOptions } from './chunking.js';
import { extractBlocks } from './extract/extract.js';
import { ExtractionError } from './extract/types.js';
import type { ExtractedDocument, WorkerReply } from './extractor.js';

export interface WorkerInput {
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

async function run({ bytes, mediaType, name, options }: WorkerInput): Promise<ExtractedDocument> {
  const extraction = await extractBlocks(bytes, mediaType, options);
  const title = extraction.title?.replace(/\s+/g, ' ').trim() || titleFromName(name);
  return { title, chunks: chunkBlocks(title, extraction.blocks, options) };
}

function failure(error: unknown): WorkerReply {
  if (error instanceof ExtractionError) return { ok: false, code: error.code, message: error.message, permanent: error.permanent };
  const message = error instanceof Error ? error.message : String(error);
  // A string or buffer past V8's size limits: the document is too big to hold, however often it is tried.
  if (error instanceof RangeError && /allocation|Invalid (string|array|typed array) length/i.test(message)) {
    return { ok: false, code: 'out_of_memory', message: `The document is too large to extract (${message}).`, permanent: true };
  }
  // Parsers throw their own errors on input they cannot read; the same bytes would fail again.
  return { ok: false, code: 'malformed', message: `The document could not be read (${message}).`, permanent: true };
}

if (parentPort) {
  const port = parentPort;
  run(workerData as WorkerInput).then(
    (document) => port.postMessage({ ok: true, document } satisfies WorkerReply),
    (error: unknown) => port.postMessage(failure(error)),
  );
}
