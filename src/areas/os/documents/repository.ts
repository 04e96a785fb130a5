// SQL for documents, their contents and their chunks. Every statement filters by
// tenant: the tenant comes from the caller's credential, never from the request.
import type { Queryable } from '../../../platform/db/database.js';
import type { DocumentStage } from './schemas.js';

export interface DocumentRow {
  id: string;
  tenant_id: string;
  collection_id: string;
  workspace_id: string;
  name: string;
  media_type: string;
  bytes: number;
  sha256: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  stage: DocumentStage | null;
  error: string | null;
  chunk_count: number;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface ChunkRow {
  id: string;
  chunk_index: number;
  content: string;
  title: string;
  heading_path: string[];
  page: number | null;
  token_count: number;
}

export type NewDocumentRow = Pick<
  DocumentRow,
  'id' | 'tenant_id' | 'collection_id' | 'workspace_id' | 'name' | 'media_type' | 'bytes' | 'sha256' | 'metadata'
>;

// Job bookkeeping (attempts, run_after, lease_until) is ingestion's, not part of the record.
const COLUMNS = `id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, status, stage, error, chunk_count,
  metadata, created_at, updated_at`;

export const documentRepository = {
  /**
   * Stores a new document, queued for ingestion, with its bytes; undefined when the
   * collection already holds the same content (the unique index decides, so two
   * uploads racing each other still make one document).
   */
  async insertQueued(q: Queryable, row: NewDocumentRow, content: Buffer) {
    const [created] = await q.query<DocumentRow>(
      `INSERT INTO documents (id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, metadata, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued')
       ON CONFLICT (collection_id, sha256) DO NOTHING RETURNING ${COLUMNS}`,
      [
        row.id,
        row.tenant_id,
        row.collection_id,
        row.workspace_id,
        row.name,
        row.media_type,
        row.bytes,
        row.sha256,
        JSON.stringify(row.metadata),
      ],
    );
    if (!created) return undefined;
    await q.query('INSERT INTO document_contents (document_id, content) VALUES ($1, $2)', [created.id, content]);
    return created;
  },

  async findBySha256(q: Queryable, tenantId: string, collectionId: string, sha256: string) {
    const [row] = await q.query<DocumentRow>(
      `SELECT ${COLUMNS} FROM documents WHERE tenant_id = $1 AND collection_id = $2 AND sha256 = $3`,
      [tenantId, collectionId, sha256],
    );
    return row;
  },

  async addToDocumentCount(q: Queryable, tenantId: string, collectionId: string, delta: number) {
    await q.query(
      'UPDATE collections SET document_count = GREATEST(document_count + $3, 0), updated_at = now() WHERE tenant_id = $1 AND id = $2',
      [tenantId, collectionId, delta],
    );
  },

  async get(q: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}) {
    const [row] = await q.query<DocumentRow>(
      `SELECT ${COLUMNS} FROM documents WHERE tenant_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [tenantId, id],
    );
    return row;
  },

  /** A page of the collection's documents in id order (oldest first), after the cursor, `pattern` (ILIKE) matching the name. */
  list(q: Queryable, tenantId: string, collectionId: string, page: { limit: number; after: string | undefined; pattern: string | null }) {
    return q.query<DocumentRow>(
      `SELECT ${COLUMNS} FROM documents WHERE tenant_id = $1 AND collection_id = $2 AND ($3::text IS NULL OR id > $3)
         AND ($5::text IS NULL OR name ILIKE $5 ESCAPE '\\')
       ORDER BY id LIMIT $4`,
      [tenantId, collectionId, page.after ?? null, page.limit, page.pattern],
    );
  },

  async count(q: Queryable, tenantId: string, collectionId: string, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM documents WHERE tenant_id = $1 AND collection_id = $2 AND ($3::text IS NULL OR name ILIKE $3 ESCAPE '\\')`,
      [tenantId, collectionId, pattern],
    );
    return row!.n;
  },

  async delete(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM documents WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },

  /** A page of the document's chunks in order, after the cursor (a chunk index), `pattern` (ILIKE) matching the content. */
  chunks(q: Queryable, tenantId: string, documentId: string, page: { limit: number; after: number | undefined; pattern: string | null }) {
    return q.query<ChunkRow>(
      `SELECT id, chunk_index, content, title, heading_path, page, token_count FROM chunks
       WHERE tenant_id = $1 AND document_id = $2 AND chunk_index > $3 AND ($5::text IS NULL OR content ILIKE $5 ESCAPE '\\')
       ORDER BY chunk_index LIMIT $4`,
      [tenantId, documentId, page.after ?? -1, page.limit, page.pattern],
    );
  },

  async countChunks(q: Queryable, tenantId: string, documentId: string, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks
       WHERE tenant_id = $1 AND document_id = $2 AND ($3::text IS NULL OR content ILIKE $3 ESCAPE '\\')`,
      [tenantId, documentId, pattern],
    );
    return row!.n;
  },
};
