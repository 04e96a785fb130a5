// A bulk upload through the public API, timed from the first byte sent to the last
// document ready: multipart uploads of as many files as one request may carry, then
// the collection's document list read page by page until every uploaded document is
// ready (a failed one stops the benchmark: a figure over failures means nothing).
import type { Call, DocumentRecord } from './gateway.js';
import type { GeneratedDocument } from './prose.js';

/** A file to upload: a generated document, or any text with its media type (markdown when none is given). */
export type UploadFile = Pick<GeneratedDocument, 'name' | 'text'> & { mediaType?: string };

export interface IngestFigures {
  documents: number;
  chunks: number;
  /** First upload sent → last document ready. */
  seconds: number;
  /** Just the uploads (202 answers), within `seconds`. */
  uploadSeconds: number;
  chunksPerSecond: number;
  documentsPerSecond: number;
}

export interface BulkIngestOptions {
  /** Files per multipart request (the gateway's GATEWAY_UPLOAD_MAX_FILES at most). */
  filesPerUpload: number;
  timeoutMs: number;
  /** Told every few seconds how far it is. */
  progress?: (line: string) => void;
  /** Where to POST the files (default: the collection's documents; e.g. a workspace's, which goes to its default collection). */
  uploadRoute?: string;
}

const POLL_MS = 500;
const PAGE = 200;

/** Starts the uploads; the returned promise settles when all are ready. `uploaded` settles when the last 202 came back. */
export function bulkIngest(
  call: Call,
  collectionId: string,
  documents: UploadFile[],
  options: BulkIngestOptions,
): { uploaded: Promise<void>; done: Promise<IngestFigures> } {
  const started = performance.now();
  const route = options.uploadRoute ?? `/api/os/collections/${collectionId}/documents`;
  const uploaded = uploadAll(call, route, documents, options.filesPerUpload);
  const done = uploaded.then(async (ids) => {
    const uploadSeconds = (performance.now() - started) / 1000;
    const chunks = await waitUntilReady(call, collectionId, ids, started, options);
    const seconds = (performance.now() - started) / 1000;
    return {
      documents: ids.size,
      chunks,
      seconds,
      uploadSeconds,
      chunksPerSecond: chunks / seconds,
      documentsPerSecond: ids.size / seconds,
    };
  });
  return { uploaded: uploaded.then(() => undefined), done };
}

async function uploadAll(call: Call, route: string, documents: UploadFile[], perUpload: number): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let i = 0; i < documents.length; i += perUpload) {
    const form = new FormData();
    for (const doc of documents.slice(i, i + perUpload))
      form.append('file', new Blob([doc.text], { type: doc.mediaType ?? 'text/markdown' }), doc.name);
    const answer = (await call('POST', route, form, 202)) as { data: DocumentRecord[] };
    for (const doc of answer.data) ids.add(doc.id);
  }
  if (ids.size !== documents.length) throw new Error(`uploaded ${documents.length} documents, the gateway accepted ${ids.size}`);
  return ids;
}

/** Polls the collection's documents until all of `ids` are ready; returns their chunks. */
async function waitUntilReady(
  call: Call,
  collectionId: string,
  ids: Set<string>,
  started: number,
  options: BulkIngestOptions,
): Promise<number> {
  let lastReport = performance.now();
  for (;;) {
    const states = await ourDocuments(call, collectionId, ids);
    const failed = states.find((d) => d.status === 'failed');
    if (failed) throw new Error(`ingestion of ${failed.name} failed: ${failed.error}`);
    const ready = states.filter((d) => d.status === 'ready');
    if (ready.length === ids.size) return ready.reduce((sum, d) => sum + d.chunkCount, 0);
    const elapsed = performance.now() - started;
    if (elapsed > options.timeoutMs)
      throw new Error(`ingestion not finished after ${Math.round(elapsed / 1000)} s: ${ready.length}/${ids.size} documents ready`);
    if (options.progress && performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      const chunks = ready.reduce((sum, d) => sum + d.chunkCount, 0);
      options.progress(`${ready.length}/${ids.size} documents ready, ${chunks} chunks, ${Math.round(elapsed / 1000)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function ourDocuments(call: Call, collectionId: string, ids: Set<string>): Promise<DocumentRecord[]> {
  const found: DocumentRecord[] = [];
  let after: string | null = null;
  do {
    const query: string = `limit=${PAGE}${after ? `&after=${after}` : ''}`;
    const page = (await call('GET', `/api/os/collections/${collectionId}/documents?${query}`, undefined, 200)) as {
      data: DocumentRecord[];
      next: string | null;
    };
    for (const doc of page.data) if (ids.has(doc.id)) found.push(doc);
    after = page.next;
  } while (after);
  return found;
}
