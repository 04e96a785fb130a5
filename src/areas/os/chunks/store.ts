// Writing and removing a document's chunks, with everything derived from them:
// the tsvector, BM25's per-collection term frequencies and length totals, and the
// vectors. Callers pass the transaction (`q`), so a document's chunks appear and
// disappear all at once, together with the statistics retrieval ranks them by.
import type { Queryable } from '../../../platform/db/database.js';
import { newId } from '../../../platform/ids.js';
import { indexedOnWrite } from './vector-index.js';

/** One chunk as ingestion produced it (see ingestion/chunking.ts). */
export interface ChunkInput {
  content: string;
  title: string;
  headingPath: string[];
  page: number | null;
  tokenCount: number;
}

/** The vectors of one embedder, aligned with the chunks they belong to. */
export interface ChunkVectors {
  embedder: string;
  dimensions: number;
  vectors: ArrayLike<number>[];
}

export interface DocumentRef {
  tenantId: string;
  collectionId: string;
  documentId: string;
  /** The collection's text-search configuration (collections.language). */
  language: string;
}

export const vectorLiteral = (vector: ArrayLike<number>): string => `[${Array.prototype.join.call(vector, ',')}]`;

/** One document's chunks and, aligned with them, each embedder's vectors. */
export interface DocumentChunks {
  ref: DocumentRef;
  chunks: ChunkInput[];
  vectors?: ChunkVectors[];
}

// The full-text GIN index takes new entries into its pending list (fastupdate,
// migration 0012) and every writer of chunks merges that list before it commits,
// in bulk: one descent per distinct lexeme of the transaction instead of one per
// lexeme of every chunk. No search ever meets a pending list, which the embedded
// database (no autovacuum) would otherwise leave growing.
const MERGE_PENDING_TERMS = `SELECT gin_clean_pending_list('chunks_tsv_idx'::regclass)`;

/**
 * Replaces the document's chunks (none yet on a first run; a retried or resumed
 * job's earlier ones otherwise) and adds their statistics. Returns the chunk ids, in order.
 */
export async function replaceDocumentChunks(
  q: Queryable,
  doc: DocumentRef,
  chunks: ChunkInput[],
  vectors?: ChunkVectors,
): Promise<string[]> {
  const [ids] = await writeDocumentsChunks(q, [{ ref: doc, chunks, ...(vectors ? { vectors: [vectors] } : {}) }]);
  return ids!;
}

/**
 * replaceDocumentChunks for several documents at once, in the caller's transaction:
 * each statement covers all of them (one chunk insert, one term statistics upsert,
 * one vector insert per embedder), which on the embedded database's one thread costs
 * far less than a statement per document, and a term common to the documents has its
 * statistics row updated once. Returns each document's chunk ids, in order.
 */
export async function writeDocumentsChunks(q: Queryable, docs: DocumentChunks[]): Promise<string[][]> {
  const documentIds = docs.map((d) => d.ref.documentId);
  if (new Set(documentIds).size !== documentIds.length) throw new Error('a document is written twice in one batch');
  const [earlier] = await q.query<{ ids: string[] | null }>(
    'SELECT array_agg(DISTINCT document_id) AS ids FROM chunks WHERE document_id = ANY($1::text[])',
    [documentIds],
  );
  const rewritten = new Set(earlier?.ids ?? []);
  for (const d of docs)
    if (rewritten.has(d.ref.documentId)) await removeDocumentChunks(q, d.ref.tenantId, d.ref.collectionId, d.ref.documentId);

  const ids = docs.map((d) => d.chunks.map(() => newId('chunk')));
  const written = docs.filter((d) => d.chunks.length > 0);
  if (written.length === 0) return ids;
  // Collections in one order, so two writers never wait on each other's (see lockCollectionStatistics).
  const collections = [...new Map(written.map((d) => [d.ref.collectionId, d.ref.tenantId])).entries()].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  for (const [collectionId, tenantId] of collections) await lockCollectionStatistics(q, tenantId, collectionId);

  const rows = docs.flatMap((d, n) => d.chunks.map((chunk, i) => ({ d, chunk, id: ids[n]![i]!, index: i })));
  // Title and heading path rank (weight A) above the text (D) and are in every chunk's vector too.
  await q.query(
    `INSERT INTO chunks (id, tenant_id, collection_id, document_id, chunk_index, content, title, heading_path, page, token_count, tsv, length)
     SELECT x.id, x.tenant, x.collection, x.document, x.ord, x.content, x.title, string_to_array(x.headings, E'\\x1f'), x.page, x.tokens, x.tsv,
            COALESCE((SELECT sum(array_length(positions, 1)) FROM unnest(x.tsv)), 0)
     FROM (
       SELECT u.*, setweight(to_tsvector(u.language::regconfig, u.title || ' ' || replace(u.headings, E'\\x1f', ' ')), 'A')
                   || to_tsvector(u.language::regconfig, u.content) AS tsv
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[], $11::text[])
            AS u(id, tenant, collection, document, ord, content, title, headings, page, tokens, language)
     ) x`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.d.ref.tenantId),
      rows.map((r) => r.d.ref.collectionId),
      rows.map((r) => r.d.ref.documentId),
      rows.map((r) => r.index),
      rows.map((r) => r.chunk.content),
      rows.map((r) => r.chunk.title),
      rows.map((r) => r.chunk.headingPath.join('\x1f')),
      rows.map((r) => r.chunk.page),
      rows.map((r) => r.chunk.tokenCount),
      rows.map((r) => r.d.ref.language),
    ],
  );
  const writtenIds = written.map((d) => d.ref.documentId);
  await q.query(
    `INSERT INTO collection_terms (collection_id, term, df)
     SELECT c.collection_id, t.lexeme, count(*) FROM chunks c, unnest(c.tsv) t WHERE c.document_id = ANY($1::text[])
     GROUP BY c.collection_id, t.lexeme
     ON CONFLICT (collection_id, term) DO UPDATE SET df = collection_terms.df + excluded.df`,
    [writtenIds],
  );
  await q.query(
    `UPDATE collections SET
       chunk_count = chunk_count + s.n, total_length = total_length + s.len, updated_at = now()
     FROM (SELECT collection_id, tenant_id, count(*) AS n, COALESCE(sum(length), 0) AS len FROM chunks
           WHERE document_id = ANY($1::text[]) GROUP BY collection_id, tenant_id) s
     WHERE collections.id = s.collection_id AND collections.tenant_id = s.tenant_id`,
    [writtenIds],
  );
  await q.query(MERGE_PENDING_TERMS);
  const embedders = new Map<string, { collectionIds: string[]; chunkIds: string[]; vectors: ChunkVectors }>();
  docs.forEach((d, n) => {
    for (const v of d.vectors ?? []) {
      checkVectors(ids[n]!, v);
      const key = `${v.embedder}\0${v.dimensions}`;
      const group = embedders.get(key) ?? { collectionIds: [], chunkIds: [], vectors: { ...v, vectors: [] } };
      for (const [i, id] of ids[n]!.entries()) {
        group.collectionIds.push(d.ref.collectionId);
        group.chunkIds.push(id);
        (group.vectors.vectors as ArrayLike<number>[]).push(v.vectors[i]!);
      }
      embedders.set(key, group);
    }
  });
  for (const group of embedders.values()) await insertVectorRows(q, group.collectionIds, group.chunkIds, group.vectors);
  return ids;
}

/** Adds one embedder's vectors for existing chunks (ingestion, or a collection changing embedder). */
export async function insertVectors(q: Queryable, collectionId: string, chunkIds: string[], vectors: ChunkVectors): Promise<void> {
  checkVectors(chunkIds, vectors);
  await insertVectorRows(
    q,
    chunkIds.map(() => collectionId),
    chunkIds,
    vectors,
  );
}

function checkVectors(chunkIds: string[], vectors: ChunkVectors): void {
  if (chunkIds.length !== vectors.vectors.length) throw new Error(`${chunkIds.length} chunks but ${vectors.vectors.length} vectors`);
  // A vector of another size would be refused by the dimension's index (a cast to vector(N)) or, without one, never found.
  const wrong = vectors.vectors.findIndex((v) => v.length !== vectors.dimensions);
  if (wrong >= 0) throw new Error(`vector ${wrong} has ${vectors.vectors[wrong]!.length} dimensions, not ${vectors.dimensions}`);
}

async function insertVectorRows(q: Queryable, collectionIds: string[], chunkIds: string[], vectors: ChunkVectors): Promise<void> {
  if (chunkIds.length === 0) return;
  await q.query(
    `INSERT INTO chunk_vectors (chunk_id, collection_id, embedder, dimensions, embedding, indexed)
     SELECT u.id, u.collection, $1, $2, u.v::vector, ${indexedOnWrite('u.collection')}
     FROM unnest($3::text[], $4::text[], $5::text[]) AS u(id, collection, v)
     ON CONFLICT (chunk_id, embedder) DO UPDATE SET embedding = excluded.embedding, dimensions = excluded.dimensions, indexed = excluded.indexed`,
    [vectors.embedder, vectors.dimensions, chunkIds, collectionIds, vectors.vectors.map(vectorLiteral)],
  );
}

/** Removes the document's chunks (their vectors go with them) and takes their statistics back out. */
export async function removeDocumentChunks(q: Queryable, tenantId: string, collectionId: string, documentId: string): Promise<void> {
  const [counts] = await q.query<{ n: number; len: number }>(
    'SELECT count(*)::int AS n, COALESCE(sum(length), 0)::bigint AS len FROM chunks WHERE tenant_id = $1 AND document_id = $2',
    [tenantId, documentId],
  );
  if (!counts || counts.n === 0) return;
  await lockCollectionStatistics(q, tenantId, collectionId);
  // Only the document's own lexemes are touched: terms that reach zero go, the rest count one chunk less.
  const lexemes = `SELECT t.lexeme, count(*)::int AS n FROM chunks c, unnest(c.tsv) t WHERE c.tenant_id = $3 AND c.document_id = $2 GROUP BY t.lexeme`;
  await q.query(
    `DELETE FROM collection_terms ct USING (${lexemes}) d WHERE ct.collection_id = $1 AND ct.term = d.lexeme AND ct.df <= d.n`,
    [collectionId, documentId, tenantId],
  );
  await q.query(`UPDATE collection_terms ct SET df = ct.df - d.n FROM (${lexemes}) d WHERE ct.collection_id = $1 AND ct.term = d.lexeme`, [
    collectionId,
    documentId,
    tenantId,
  ]);
  await q.query('DELETE FROM chunks WHERE tenant_id = $1 AND document_id = $2', [tenantId, documentId]);
  await q.query(
    `UPDATE collections SET chunk_count = GREATEST(chunk_count - $2, 0), total_length = GREATEST(total_length - $3, 0), updated_at = now()
     WHERE id = $1 AND tenant_id = $4`,
    [collectionId, counts.n, counts.len, tenantId],
  );
}

/**
 * Writers of one collection's statistics take its row first: two documents ingested
 * at once would otherwise update the same collection_terms rows in different orders
 * and deadlock each other (on PostgreSQL; the embedded database has one connection).
 */
async function lockCollectionStatistics(q: Queryable, tenantId: string, collectionId: string): Promise<void> {
  await q.query('SELECT 1 FROM collections WHERE tenant_id = $1 AND id = $2 FOR UPDATE', [tenantId, collectionId]);
}
