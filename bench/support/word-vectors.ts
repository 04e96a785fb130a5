// The built-in embedder prepares itself when a gateway starts (converting its word
// vectors once per file: 10-30 s of CPU in a child process). A bench's gateway on a fresh
// data dir would do that while it is being measured, so the benches share one converted
// file, made here before any gateway starts (once per machine, like the tests' copy).
import os from 'node:os';
import path from 'node:path';
import { WordVectorEmbedder } from '../../src/areas/os/embedders/word-vectors/embedder.js';

export const BENCH_WORD_VECTORS_FILE = path.join(os.tmpdir(), 'gateway-bench-word-vectors-en-100d.bin');

/** GATEWAY_WORD_VECTORS_FILE for a bench's gateway, converted beforehand if no earlier run left it. */
export async function preparedWordVectors(): Promise<{ GATEWAY_WORD_VECTORS_FILE: string }> {
  const embedder = new WordVectorEmbedder({ dataDir: os.tmpdir(), binaryFile: BENCH_WORD_VECTORS_FILE });
  try {
    await embedder.ready();
  } finally {
    await embedder.close();
  }
  return { GATEWAY_WORD_VECTORS_FILE: BENCH_WORD_VECTORS_FILE };
}
