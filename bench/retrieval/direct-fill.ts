// Filling a collection to the large size without the API: ingestion through the API
// is bounded by per-document work (an extraction thread each, one transaction each,
// an HNSW insert per vector), and at that pace 100k chunks take far longer than a
// benchmark should. Here generated documents are written as they would be once
// ingested: a `ready` document row and its chunks through the same store function
// ingestion uses (replaceDocumentChunks: tsvector, BM25 statistics, vectors), many
// documents per transaction. The vector indexes the fill writes to are dropped first
// and rebuilt after (pgvector builds a graph in bulk far faster than it inserts into
// one), from their own definitions, so the result is the schema the migrations made.
// Each generated section is one chunk; document contents are not stored (retrieval
// never reads them).
import { createHash } from 'node:crypto';
import { replaceDocumentChunks } from '../../src/areas/os/chunks/store.js';
import { embeddingText } from '../../src/areas/os/ingestion/process-document.js';
import type { Database, Queryable } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import type { GeneratedDocument, ProseGenerator } from './prose.js';

export interface FillTarget {
  tenantId: string;
  workspaceId: string;
  collectionId: string;
  language: string;
  embedder: string;
  dimensions: number;
}

export interface FillFigures {
  documents: number;
  chunks: number;
  /** Generating, embedding and writing. */
  writeSeconds: number;
  /** Rebuilding the vector index afterwards. */
  indexSeconds: number;
}

export interface FillOptions {
  /** Chunks per document (each document gets this many sections). */
  sectionsPerDocument: () => number;
  /** Chunks written per transaction. */
  chunksPerTransaction: number;
  embed: (texts: string[]) => Promise<ArrayLike<number>[]>;
  progress?: (line: string) => void;
}

const MAINTENANCE_WORK_MEM = '512MB';

export async function fillDirectly(
  db: Database,
  target: FillTarget,
  generator: ProseGenerator,
  chunks: number,
  options: FillOptions,
): Promise<FillFigures> {
  const indexes = await vectorIndexes(db, target.dimensions);
  for (const index of indexes) await db.query(`DROP INDEX ${index.name}`);
  const started = performance.now();
  let written = 0;
  let documents = 0;
  let lastReport = started;
  let failure: unknown;
  try {
    while (written < chunks) {
      let inTransaction = 0;
      const batch: GeneratedDocument[] = [];
      while (inTransaction < options.chunksPerTransaction && written + inTransaction < chunks) {
        const doc = generator.document(Math.min(options.sectionsPerDocument(), chunks - written - inTransaction));
        batch.push(doc);
        inTransaction += doc.sections.length;
      }
      const inputs = batch.map((doc) =>
        doc.sections.map((s) => ({
          content: s.content,
          title: doc.title,
          headingPath: s.headingPath,
          page: null,
          // The chunker counts tokens exactly; ~4/3 per English word is close enough for a chunk nobody prompts with.
          tokenCount: Math.round(s.content.split(/\s+/).length * 1.33),
        })),
      );
      const vectors = await options.embed(inputs.flat().map(embeddingText));
      await db.tx(async (q) => {
        let at = 0;
        for (const [i, doc] of batch.entries()) {
          const chunkInputs = inputs[i]!;
          const documentId = await insertReadyDocument(q, target, doc.name, doc.text, chunkInputs.length);
          await replaceDocumentChunks(
            q,
            { tenantId: target.tenantId, collectionId: target.collectionId, documentId, language: target.language },
            chunkInputs,
            { embedder: target.embedder, dimensions: target.dimensions, vectors: vectors.slice(at, at + chunkInputs.length) },
          );
          at += chunkInputs.length;
        }
        await q.query('UPDATE collections SET document_count = document_count + $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [
          target.tenantId,
          target.collectionId,
          batch.length,
        ]);
      });
      written += inTransaction;
      documents += batch.length;
      if (options.progress && performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        options.progress(`${written}/${chunks} chunks written, ${Math.round((performance.now() - started) / 1000)} s`);
      }
    }
  } catch (error) {
    failure = error;
  }
  // However the fill ends, the indexes come back: the gateway is searched afterwards.
  const writeSeconds = (performance.now() - started) / 1000;
  options.progress?.(`${written} chunks written in ${writeSeconds.toFixed(0)} s; rebuilding ${indexes.length} vector index(es)…`);
  const indexSeconds = await rebuild(db, indexes);
  if (failure) throw failure;
  return { documents, chunks: written, writeSeconds, indexSeconds };
}

interface IndexDefinition {
  name: string;
  definition: string;
}

/** The HNSW indexes over chunk_vectors that vectors of `dimensions` land in. */
async function vectorIndexes(db: Database, dimensions: number): Promise<IndexDefinition[]> {
  const rows = await db.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunk_vectors' AND indexdef ILIKE '%USING hnsw%'`,
  );
  return rows
    .filter((row) => row.indexdef.includes(`vector(${dimensions})`))
    .map((row) => ({ name: row.indexname, definition: row.indexdef }));
}

async function rebuild(db: Database, indexes: IndexDefinition[]): Promise<number> {
  const started = performance.now();
  for (const index of indexes)
    await db.tx(async (q) => {
      // The graph built in memory, not spilled: that is what makes a bulk build fast.
      await q.query(`SET LOCAL maintenance_work_mem = '${MAINTENANCE_WORK_MEM}'`);
      await q.query(index.definition);
    });
  return (performance.now() - started) / 1000;
}

async function insertReadyDocument(q: Queryable, target: FillTarget, name: string, text: string, chunks: number): Promise<string> {
  const id = newId('document');
  const bytes = Buffer.byteLength(text);
  await q.query(
    `INSERT INTO documents (id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, status, chunk_count)
     VALUES ($1, $2, $3, $4, $5, 'text/markdown', $6, $7, 'ready', $8)`,
    [id, target.tenantId, target.collectionId, target.workspaceId, name, bytes, createHash('sha256').update(text).digest('hex'), chunks],
  );
  return id;
}
