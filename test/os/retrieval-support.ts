// What the retrieval tests build on: a deterministic test embedder (hashed bag of
// words, with a small synonym table so paraphrases land near each other), and
// collections and documents written with plain SQL and replaceDocumentChunks, the
// way ingestion will write them (the documents API is built elsewhere).
import { createHash } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway.js';
import { newId } from '../../src/platform/ids.js';
import { replaceDocumentChunks, type ChunkInput } from '../../src/areas/os/chunks/store.js';
import { EmbedderUnavailableError, type QueryEmbedder, type RetrievalDeps } from '../../src/areas/os/retrieval/search.js';

export const TEST_EMBEDDER = 'test-hash-100';
export const TEST_DIMENSIONS = 100;

// Words that mean the same to the test embedder (and nothing to BM25).
const SYNONYMS: Record<string, string> = {
  holiday: 'vacation',
  holidays: 'vacation',
  vacations: 'vacation',
  leave: 'vacation',
  staff: 'employee',
  employees: 'employee',
  workers: 'employee',
  annually: 'year',
  yearly: 'year',
  receive: 'get',
  receives: 'get',
  days: 'day',
};
const STOP = new Set(
  'a an and are as at be by do does each every for from how i in is it many much of on or our the to we what when who will with'.split(' '),
);

/** Hashed bag of words into 100 signed dimensions, normalised: similar wording, similar vector. */
export function testEmbed(text: string): Float64Array {
  const vector = new Float64Array(TEST_DIMENSIONS);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(raw)) continue;
    const word = SYNONYMS[raw] ?? raw;
    const hash = createHash('sha256').update(word).digest();
    vector[hash.readUInt32LE(0) % TEST_DIMENSIONS]! += hash[4]! & 1 ? 1 : -1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

export const testQueryEmbedder: QueryEmbedder = async (_tenantId, embedder, text) => {
  if (embedder !== TEST_EMBEDDER) throw new EmbedderUnavailableError(`unknown embedder ${embedder}`);
  return testEmbed(text);
};

export const depsOf = (gw: TestGateway, embedQuery: QueryEmbedder = testQueryEmbedder): RetrievalDeps => ({
  db: gw.ctx.db,
  vector: gw.ctx.vector,
  embedQuery,
});

export async function createWorkspace(gw: TestGateway, tenantId: string, name = 'Docs'): Promise<string> {
  const id = newId('workspace');
  await gw.ctx.db.query('INSERT INTO workspaces (id, tenant_id, name) VALUES ($1, $2, $3)', [id, tenantId, name]);
  return id;
}

export interface TestCollection {
  id: string;
  tenantId: string;
  workspaceId: string;
  language: string;
  embedder: string | null;
}

export async function createCollection(
  gw: TestGateway,
  tenantId: string,
  workspaceId: string,
  options: { language?: string; embedder?: string | null; name?: string } = {},
): Promise<TestCollection> {
  const id = newId('collection');
  const language = options.language ?? 'english';
  // The test embedder unless told otherwise; without pgvector there are no vectors to search.
  const embedder = options.embedder === undefined ? (gw.ctx.vector ? TEST_EMBEDDER : null) : options.embedder;
  await gw.ctx.db.query(
    `INSERT INTO collections (id, tenant_id, workspace_id, name, language, embedding_model, embedding_dimensions)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, tenantId, workspaceId, options.name ?? id, language, embedder, embedder ? TEST_DIMENSIONS : null],
  );
  return { id, tenantId, workspaceId, language, embedder };
}

export type TestChunk = string | (Partial<ChunkInput> & { content: string });

/** A ready document with these chunks (and their test vectors), as ingestion leaves it. */
export async function addDocument(
  gw: TestGateway,
  collection: TestCollection,
  name: string,
  chunks: TestChunk[],
  options: { status?: 'queued' | 'processing' | 'ready' | 'failed'; vectors?: (chunk: ChunkInput) => ArrayLike<number> } = {},
): Promise<{ id: string; chunkIds: string[] }> {
  const id = newId('document');
  const inputs: ChunkInput[] = chunks.map((chunk) => {
    const c = typeof chunk === 'string' ? { content: chunk } : chunk;
    return {
      content: c.content,
      title: c.title ?? name,
      headingPath: c.headingPath ?? [],
      page: c.page ?? null,
      tokenCount: c.tokenCount ?? c.content.split(/\s+/).length,
    };
  });
  const status = options.status ?? 'ready';
  return gw.ctx.db.tx(async (q) => {
    await q.query(
      `INSERT INTO documents (id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, status, chunk_count)
       VALUES ($1, $2, $3, $4, $5, 'text/plain', $6, $7, $8, $9)`,
      [
        id,
        collection.tenantId,
        collection.id,
        collection.workspaceId,
        name,
        inputs.reduce((n, c) => n + c.content.length, 0),
        createHash('sha256').update(id).digest('hex'),
        status,
        status === 'ready' ? inputs.length : 0,
      ],
    );
    if (status !== 'ready') return { id, chunkIds: [] };
    const embed = options.vectors ?? ((chunk: ChunkInput) => testEmbed(chunk.content));
    const vectors = collection.embedder
      ? { embedder: collection.embedder, dimensions: TEST_DIMENSIONS, vectors: inputs.map(embed) }
      : undefined;
    const chunkIds = await replaceDocumentChunks(
      q,
      { tenantId: collection.tenantId, collectionId: collection.id, documentId: id, language: collection.language },
      inputs,
      vectors,
    );
    return { id, chunkIds };
  });
}
