// SQL for collections. Every statement filters by tenant: the tenant comes from
// the caller's credential, never from the request.
import type { Queryable } from '../../../platform/db/database.js';

export interface CollectionRow {
  id: string;
  tenant_id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  language: string;
  is_default: boolean;
  embedding_model: string | null;
  embedding_dimensions: number | null;
  pending_embedding_model: string | null;
  rerank_model: string | null;
  document_count: number;
  chunk_count: number;
  created_at: Date;
  updated_at: Date;
}

export type NewCollectionRow = Pick<
  CollectionRow,
  | 'id'
  | 'tenant_id'
  | 'workspace_id'
  | 'name'
  | 'description'
  | 'language'
  | 'is_default'
  | 'embedding_model'
  | 'embedding_dimensions'
  | 'rerank_model'
>;

/** What a PATCH changes; an absent field stays as it is. */
export interface CollectionChange {
  name?: string;
  description?: string | null;
  language?: string;
  embedding?: { model: string | null; dimensions: number | null };
  pendingEmbeddingModel?: string | null;
  rerankModel?: string | null;
}

// total_length is BM25's bookkeeping, not part of the record.
const COLUMNS = `id, tenant_id, workspace_id, name, description, language, is_default, embedding_model, embedding_dimensions,
  pending_embedding_model, rerank_model, document_count, chunk_count, created_at, updated_at`;

export const collectionRepository = {
  list(q: Queryable, tenantId: string, workspaceId: string) {
    return q.query<CollectionRow>(`SELECT ${COLUMNS} FROM collections WHERE tenant_id = $1 AND workspace_id = $2 ORDER BY id`, [
      tenantId,
      workspaceId,
    ]);
  },

  async get(q: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}) {
    const [row] = await q.query<CollectionRow>(
      `SELECT ${COLUMNS} FROM collections WHERE tenant_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [tenantId, id],
    );
    return row;
  },

  async getDefault(q: Queryable, tenantId: string, workspaceId: string) {
    const [row] = await q.query<CollectionRow>(
      `SELECT ${COLUMNS} FROM collections WHERE tenant_id = $1 AND workspace_id = $2 AND is_default`,
      [tenantId, workspaceId],
    );
    return row;
  },

  async workspaceExists(q: Queryable, tenantId: string, workspaceId: string) {
    const rows = await q.query('SELECT 1 FROM workspaces WHERE tenant_id = $1 AND id = $2', [tenantId, workspaceId]);
    return rows.length > 0;
  },

  async insert(q: Queryable, row: NewCollectionRow) {
    const [created] = await q.query<CollectionRow>(
      `INSERT INTO collections (id, tenant_id, workspace_id, name, description, language, is_default, embedding_model, embedding_dimensions, rerank_model)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [
        row.id,
        row.tenant_id,
        row.workspace_id,
        row.name,
        row.description,
        row.language,
        row.is_default,
        row.embedding_model,
        row.embedding_dimensions,
        row.rerank_model,
      ],
    );
    return created!;
  },

  async update(q: Queryable, tenantId: string, id: string, change: CollectionChange) {
    const [row] = await q.query<CollectionRow>(
      `UPDATE collections SET
         name = COALESCE($3, name),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         language = COALESCE($6, language),
         embedding_model = CASE WHEN $7::boolean THEN $8 ELSE embedding_model END,
         embedding_dimensions = CASE WHEN $7::boolean THEN $9::integer ELSE embedding_dimensions END,
         pending_embedding_model = CASE WHEN $10::boolean THEN $11 ELSE pending_embedding_model END,
         rerank_model = CASE WHEN $12::boolean THEN $13 ELSE rerank_model END,
         updated_at = now()
       WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [
        tenantId,
        id,
        change.name ?? null,
        change.description !== undefined,
        change.description ?? null,
        change.language ?? null,
        change.embedding !== undefined,
        change.embedding?.model ?? null,
        change.embedding?.dimensions ?? null,
        change.pendingEmbeddingModel !== undefined,
        change.pendingEmbeddingModel ?? null,
        change.rerankModel !== undefined,
        change.rerankModel ?? null,
      ],
    );
    return row;
  },

  /** Deletes a collection that is not its workspace's default; its documents, chunks and vectors go with it (ON DELETE CASCADE). */
  async deleteUnlessDefault(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM collections WHERE tenant_id = $1 AND id = $2 AND NOT is_default RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },

  /** Whether the database has this text-search configuration (collections.language is cast to regconfig). */
  async languageExists(q: Queryable, language: string) {
    const rows = await q.query('SELECT 1 FROM pg_catalog.pg_ts_config WHERE cfgname = $1', [language]);
    return rows.length > 0;
  },

  async languages(q: Queryable) {
    const rows = await q.query<{ cfgname: string }>('SELECT cfgname FROM pg_catalog.pg_ts_config ORDER BY cfgname');
    return rows.map((r) => r.cfgname);
  },
};
