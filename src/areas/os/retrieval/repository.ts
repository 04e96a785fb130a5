// SQL for retrieval's scopes and answers: resolving the ids a request names (always
// within the caller's tenant), reading the snippets fusion chose, and telling why a
// scope had nothing to offer. The two legs' own SQL is in lexical.ts and vector.ts.
import type { Queryable } from '../../../platform/db/database.js';

export interface CollectionRow {
  id: string;
  workspace_id: string;
  language: string;
  embedding_model: string | null;
  embedding_dimensions: number | null;
  rerank_model: string | null;
  chunk_count: number;
  total_length: number;
}

export interface DocumentRow {
  id: string;
  collection_id: string;
  workspace_id: string;
}

export interface SnippetRow {
  id: string;
  document_id: string;
  document_name: string;
  collection_id: string;
  workspace_id: string;
  chunk_index: number;
  content: string;
  title: string;
  heading_path: string[];
  page: number | null;
}

export const retrievalRepository = {
  existingWorkspaces(q: Queryable, tenantId: string, ids: string[]) {
    return q.query<{ id: string }>('SELECT id FROM workspaces WHERE tenant_id = $1 AND id = ANY($2::text[])', [tenantId, ids]);
  },

  /** The named collections and every collection of the named workspaces. */
  collections(q: Queryable, tenantId: string, ids: string[], workspaceIds: string[]) {
    return q.query<CollectionRow>(
      `SELECT id, workspace_id, language, embedding_model, embedding_dimensions, rerank_model, chunk_count, total_length
       FROM collections WHERE tenant_id = $1 AND (id = ANY($2::text[]) OR workspace_id = ANY($3::text[]))`,
      [tenantId, ids, workspaceIds],
    );
  },

  documents(q: Queryable, tenantId: string, ids: string[]) {
    return q.query<DocumentRow>('SELECT id, collection_id, workspace_id FROM documents WHERE tenant_id = $1 AND id = ANY($2::text[])', [
      tenantId,
      ids,
    ]);
  },

  snippets(q: Queryable, tenantId: string, chunkIds: string[]) {
    return q.query<SnippetRow>(
      `SELECT c.id, c.document_id, d.name AS document_name, c.collection_id, d.workspace_id, c.chunk_index,
              c.content, c.title, c.heading_path, c.page
       FROM chunks c JOIN documents d ON d.id = c.document_id AND d.tenant_id = $1
       WHERE c.tenant_id = $1 AND c.id = ANY($2::text[])`,
      [tenantId, chunkIds],
    );
  },

  /**
   * Why a scope with no snippet had none: documents still being ingested, and whether
   * any chunk is there to search at all. `documentIds` null: the whole collections.
   */
  async scopeState(q: Queryable, tenantId: string, collectionIds: string[], documentIds: string[] | null) {
    const [row] = await q.query<{ pending: boolean; searchable: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM documents WHERE tenant_id = $1 AND collection_id = ANY($2::text[])
                        AND ($3::text[] IS NULL OR id = ANY($3::text[])) AND status IN ('queued', 'processing')) AS pending,
              EXISTS (SELECT 1 FROM chunks WHERE tenant_id = $1 AND collection_id = ANY($2::text[])
                        AND ($3::text[] IS NULL OR document_id = ANY($3::text[]))) AS searchable`,
      [tenantId, collectionIds, documentIds],
    );
    return row!;
  },
};
