// What the extraction tests share: the worker's options, a call with overrides, and
// the check that a document is refused with a given code while the process goes on.
import assert from 'node:assert/strict';
import type { MediaType } from '../../src/areas/os/documents/media-types.js';
import { ExtractionError, extractDocument, type ExtractorOptions } from '../../src/areas/os/ingestion/extractor.js';

const options: ExtractorOptions = {
  timeoutMs: 60_000,
  maxMemoryMb: 256,
  maxExpandedBytes: 16 * 1024 ** 2,
  chunkTokens: 200,
  chunkOverlapTokens: 30,
};
export const extract = (bytes: Uint8Array, type: MediaType, name: string, overrides: Partial<ExtractorOptions> = {}) =>
  extractDocument(bytes, type, name, { ...options, ...overrides });
export const text = (doc: { chunks: { content: string }[] }) => doc.chunks.map((c) => c.content).join('\n\n');

/** Rejects with an ExtractionError of `code`, and the process goes on. */
export async function rejectsWith(promise: Promise<unknown>, code: ExtractionError['code'], permanent = true) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ExtractionError, String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.permanent, permanent);
    return true;
  });
}
