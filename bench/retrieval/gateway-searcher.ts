// The real thing: the gateway started in-process on an embedded database in a temp
// data dir (no compute node: the built-in embedder is the only one), one tenant, an
// API key and a workspace; the corpus uploaded through the public API as multipart
// and searched with POST /api/os/search, exactly as an integration would.
import { resolveScopes } from '../../src/areas/os/retrieval/scopes.js';
import { embedQuery, type Legs, searchLegs } from '../../src/areas/os/retrieval/search.js';
import type { ReferenceChunk } from './bm25.js';
import type { CorpusFile } from './dataset.js';
import { type Call, type DocumentRecord, startInProcessGateway } from './gateway.js';
import { MODES, type Mode, type SearchOutcome, type Searcher, type Snippet } from './types.js';

const MEDIA_TYPES: Record<string, string> = {
  md: 'text/markdown',
  csv: 'text/csv',
  txt: 'text/plain',
  html: 'text/html',
  json: 'application/json',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

const UPLOAD_BATCH = 20;

export interface GatewayOptions {
  logLevel: string;
  ingestTimeoutMs: number;
}

export interface GatewaySearcher extends Searcher {
  ingest: IngestReport;
  /** Every chunk the gateway made, read back through the API: what the BM25 reference indexes. */
  chunks(): Promise<ReferenceChunk[]>;
  /** For tuning (--tune): the two legs' candidates for a query, straight from the retrieval module. */
  legs(query: string): Promise<Legs>;
  /** For tuning: the built-in word vectors' alignment of each text with the query. */
  align(query: string, texts: string[]): Promise<number[] | null>;
}

export async function startGatewaySearcher(corpus: CorpusFile[], options: GatewayOptions): Promise<GatewaySearcher> {
  const gateway = await startInProcessGateway({ logLevel: options.logLevel });
  const close = () => gateway.close();
  try {
    const { call, id: tenantId } = await gateway.tenant('retrieval-bench');

    const workspace = (await call('POST', '/api/os/workspaces', { name: 'Retrieval quality benchmark' }, 201)) as { id: string };
    const ingest = await uploadCorpus(call, workspace.id, corpus, options.ingestTimeoutMs);

    return {
      name: 'gateway',
      modes: MODES,
      ingest,
      async search(query: string, mode: Mode, topK: number): Promise<SearchOutcome> {
        const started = performance.now();
        const body = (await call('POST', '/api/os/search', { query, workspaceIds: [workspace.id], topK, mode }, 200)) as {
          data: Snippet[];
          status?: string;
          retrieval?: SearchOutcome['retrieval'];
        };
        return { snippets: body.data, status: body.status, retrieval: body.retrieval, ms: performance.now() - started };
      },
      chunks: () => readChunks(call, ingest.documents),
      align: (query, texts) => gateway.ctx.os.embedders.align(query, texts),
      async legs(query) {
        const deps = gateway.ctx.os.retrieval;
        const [scope] = await resolveScopes(deps.db, tenantId, { workspaceIds: [workspace.id], topK: 10 });
        const vectors = await embedQuery(deps, tenantId, [scope!], query, new Map());
        return searchLegs(deps, tenantId, scope!, query, 'hybrid', vectors);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface IngestReport {
  documents: { name: string; id: string; chunkCount: number }[];
  chunks: number;
  seconds: number;
}

/** Uploads the corpus in one multipart request and waits until every document is ready. */
export async function uploadCorpus(call: Call, workspaceId: string, corpus: CorpusFile[], timeoutMs: number): Promise<IngestReport> {
  const started = performance.now();
  const accepted: DocumentRecord[] = [];
  // The API takes at most 20 files an upload (as a browser's folder upload would send them).
  for (let at = 0; at < corpus.length; at += UPLOAD_BATCH) {
    const batch = corpus.slice(at, at + UPLOAD_BATCH);
    const form = new FormData();
    for (const file of batch) {
      const type = MEDIA_TYPES[file.name.split('.').pop() ?? ''] ?? 'application/octet-stream';
      form.append('file', new Blob([new Uint8Array(file.bytes)], { type }), file.name);
    }
    const answer = (await call('POST', `/api/os/workspaces/${workspaceId}/documents`, form, [200, 202])) as { data: DocumentRecord[] };
    if (answer.data.length !== batch.length)
      throw new Error(`uploaded ${batch.length} files, the gateway answered with ${answer.data.length} documents`);
    accepted.push(...answer.data);
  }

  const pending = new Map(accepted.map((d) => [d.id, d]));
  const done: DocumentRecord[] = [];
  let lastReport = 0;
  while (pending.size) {
    if (performance.now() - started > timeoutMs)
      throw new Error(
        `ingestion not finished after ${timeoutMs / 1000} s: ${[...pending.values()].map((d) => `${d.name} ${d.status}`).join(', ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const id of [...pending.keys()]) {
      const doc = (await call('GET', `/api/os/documents/${id}`, undefined, 200)) as DocumentRecord;
      if (doc.status === 'failed') throw new Error(`ingestion of ${doc.name} failed: ${doc.error}`);
      if (doc.status === 'ready') {
        pending.delete(id);
        done.push(doc);
      } else pending.set(id, doc);
    }
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      console.log(
        `  ingesting: ${done.length}/${corpus.length} ready (${[...pending.values()].map((d) => `${d.name}: ${d.stage ?? d.status}`).join('; ')})`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const documents = done.map((d) => ({ name: d.name, id: d.id, chunkCount: d.chunkCount }));
  return { documents, chunks: documents.reduce((sum, d) => sum + d.chunkCount, 0), seconds };
}

interface ChunkRecord {
  id: string;
  chunkIndex: number;
  content: string;
  title: string;
  headingPath: string[];
}

async function readChunks(call: Call, documents: IngestReport['documents']): Promise<ReferenceChunk[]> {
  const chunks: ReferenceChunk[] = [];
  for (const doc of documents) {
    let after: string | null = null;
    do {
      const query: string = `?limit=200${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const page = (await call('GET', `/api/os/documents/${doc.id}/chunks${query}`, undefined, 200)) as {
        data: ChunkRecord[];
        next: string | null;
      };
      for (const c of page.data)
        chunks.push({
          id: c.id,
          documentName: doc.name,
          chunkIndex: c.chunkIndex,
          content: c.content,
          context: [c.title, ...c.headingPath].join(' '),
        });
      after = page.next;
    } while (after);
  }
  return chunks;
}
