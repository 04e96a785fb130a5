// The embedder's worker thread: holds the word vectors (~23 MB) and does all the
// tokenising and pooling, so a batch of chunks never occupies the request thread.
//
// Protocol (embedder.ts is the other side):
//   → { type: 'load' }                     read and check the converted file
//   ← { type: 'missing', reason }          absent, truncated, corrupt or an old version: convert, then 'load' again
//   ← { type: 'loaded', words }            ready to embed
//   → { type: 'embed', id, texts }
//   ← { type: 'vectors', id, vectors }     one Float32Array, texts × dimensions, transferred
//   → { type: 'align', id, query, texts }
//   ← { type: 'vectors', id, vectors }     one Float32Array: each text's alignment with the query (alignment.ts)
//   ← { type: 'error', id?, message }
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../../../../platform/thread-priority.js';
import { decodeTable, WordVectorFormatError } from './format.js';
import { WordAligner } from './alignment.js';
import { SifPooler } from './pooling.js';

export interface WorkerOptions {
  binaryFile: string;
}

export type ToWorker =
  | { type: 'load' }
  | { type: 'embed'; id: number; texts: string[] }
  | { type: 'align'; id: number; query: string; texts: string[] };
export type FromWorker =
  | { type: 'missing'; reason: string }
  | { type: 'loaded'; words: number }
  | { type: 'vectors'; id: number; vectors: Float32Array }
  | { type: 'error'; id?: number; message: string };

const port = parentPort;
if (!port) throw new Error('worker.ts runs as a worker thread');
const { binaryFile } = workerData as WorkerOptions;
// Embedding a document's chunks is background work: chat requests (and the query
// embeddings they need, a few words each) should win the cores.
void lowerThisThreadPriority();
let pooler: SifPooler | undefined;
let aligner: WordAligner | undefined;

const reply = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

port.on('message', (message: ToWorker) => {
  if (message.type === 'load') {
    load().catch((error: Error) => reply({ type: 'error', message: error.message }));
    return;
  }
  if (!pooler) {
    reply({ type: 'error', id: message.id, message: 'The word vectors are not loaded' });
    return;
  }
  try {
    if (message.type === 'align') {
      const scores = Float32Array.from(aligner!.align(message.query, message.texts));
      reply({ type: 'vectors', id: message.id, vectors: scores }, [scores.buffer as ArrayBuffer]);
      return;
    }
    const dims = pooler.dimensions;
    const vectors = new Float32Array(message.texts.length * dims);
    for (let i = 0; i < message.texts.length; i++) pooler.embedInto(message.texts[i] as string, vectors.subarray(i * dims, (i + 1) * dims));
    reply({ type: 'vectors', id: message.id, vectors }, [vectors.buffer as ArrayBuffer]);
  } catch (error) {
    reply({ type: 'error', id: message.id, message: (error as Error).message });
  }
});

async function load(): Promise<void> {
  let file: Buffer;
  try {
    file = await readFile(binaryFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    reply({ type: 'missing', reason: 'not converted yet' });
    return;
  }
  try {
    const table = decodeTable(file);
    pooler = new SifPooler(table);
    aligner = new WordAligner(table, pooler.vocabulary);
  } catch (error) {
    if (!(error instanceof WordVectorFormatError)) throw error;
    reply({ type: 'missing', reason: error.message });
    return;
  }
  reply({ type: 'loaded', words: pooler.vocabulary.size });
}
