// Writing and removing a document's chunks, with everything derived from them:
// the tsvector, BM25's per-collection term frequencies and length totals, and the
// vectors. Callers pass the transaction (`q`), so a document's chunks appear and
// disappear all at once, together with the statistics retrieval ranks them by.
import type { Queryable } from '../../../platform/db/database.js';
import { newId } from '../../../platform/ids.js';

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
  await removeDocumentChunks(q, doc.tenantId, doc.collectionId, doc.documentId);
  if (chunks.length === 0) return [];
  await lockCollectionStatistics(q, doc.tenantId, doc.collectionId);
  const ids = chunks.map(() => newId('chunk'));
  // Title and heading path rank (weight A) above the text (D) and are in every chunk's vector too.
  await q.query(
    `INSERT INTO chunks (id, tenant_id, collection_id, document_id, chunk_index, content, title, heading_path, page, token_count, tsv, length)
     SELECT x.id, $1, $2, $3, x.ord - 1, x.content, x.title, string_to_array(x.headings, E'\\x1f'), x.page, x.tokens, x.tsv,
            COALESCE((SELECT sum(array_length(positions, 1)) FROM unnest(x.tsv)), 0)
     FROM (
       SELECT u.*, setweight(to_tsvector($4::regconfig, u.title || ' ' || replace(u.headings, E'\\x1f', ' ')), 'A')
                   || to_tsvector($4::regconfig, u.content) AS tsv
       FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[])
            WITH ORDINALITY AS u(id, content, title, headings, page, tokens, ord)
     ) x`,
    [
      doc.tenantId,
      doc.collectionId,
      doc.documentId,
      doc.language,
      ids,
      chunks.map((c) => c.content),
      chunks.map((c) => c.title),
      chunks.map((c) => c.headingPath.join('\x1f')),
      chunks.map((c) => c.page),
      chunks.map((c) => c.tokenCount),
    ],
  );
  await q.query(
    `INSERT INTO collection_terms (collection_id, term, df)
     SELECT $1, t.lexeme, count(*) FROM chunks c, unnest(c.tsv) t WHERE c.tenant_id = $3 AND c.document_id = $2 GROUP BY t.lexeme
     ON CONFLICT (collection_id, term) DO UPDATE SET df = collection_terms.df + excluded.df`,
    [doc.collectionId, doc.documentId, doc.tenantId],
  );
  await q.query(
    `UPDATE collections SET
       chunk_count = chunk_count + s.n, total_length = total_length + s.len, updated_at = now()
     FROM (SELECT count(*) AS n, COALESCE(sum(length), 0) AS len FROM chunks WHERE tenant_id = $3 AND document_id = $2) s
     WHERE id = $1 AND tenant_id = $3`,
    [doc.collectionId, doc.documentId, doc.tenantId],
  );
  if (vectors) await insertVectors(q, doc.collectionId, ids, vectors);
  return ids;
}

/** Adds one embedder's vectors for existing chunks (ingestion, or a collection changing embedder). */
export async function insertVectors(q: Queryable, collectionId: string, chunkIds: string[], vectors: ChunkVectors): Promise<void> {
  if (chunkIds.length !== vectors.vectors.length) throw new Error(`${chunkIds.length} chunks but ${vectors.vectors.length} vectors`);
  if (chunkIds.length === 0) return;
  // A vector of another size would be refused by the dimension's index (a cast to vector(N)) or, without one, never found.
  const wrong = vectors.vectors.findIndex((v) => v.length !== vectors.dimensions);
  if (wrong >= 0) throw new Error(`vector ${wrong} has ${vectors.vectors[wrong]!.length} dimensions, not ${vectors.dimensions}`);
  await q.query(
    `INSERT INTO chunk_vectors (chunk_id, collection_id, embedder, dimensions, embedding)
     SELECT u.id, $1, $2, $3, u.v::vector FROM unnest($4::text[], $5::text[]) AS u(id, v)
     ON CONFLICT (chunk_id, embedder) DO UPDATE SET embedding = excluded.embedding, dimensions = excluded.dimensions`,
    [collectionId, vectors.embedder, vectors.dimensions, chunkIds, vectors.vectors.map(vectorLiteral)],
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
