// Turns a request's grounding fields into the scopes retrieval searches. Every id,
// in any field, is resolved within the caller's tenant: one that is not the
// tenant's (or does not exist) is a 404 naming its kind, never a silently
// ungrounded answer.
import type { Queryable } from '../../../platform/db/database.js';
import { notFound, validation } from '../../../platform/errors.js';
import { isId, type IdKind } from '../../../platform/ids.js';
import { retrievalRepository, type CollectionRow } from './repository.js';
import { DEFAULT_TOP_K, type RagScope } from './schemas.js';

export interface SearchCollection {
  id: string;
  workspaceId: string;
  /** The text-search configuration its chunks were indexed with. */
  language: string;
  /** The embedder whose vectors are searched; null: lexical only. */
  embedder: { model: string; dimensions: number } | null;
  chunkCount: number;
  totalLength: number;
  /** The reranker the collection names; null: none. */
  rerankModel: string | null;
}

export interface SearchScope {
  collections: SearchCollection[];
  /** Only these documents' chunks; null: every chunk of the collections. */
  documentIds: string[] | null;
  topK: number;
  minScore: number;
  /**
   * The reranker for this scope's candidates: the ragScope's own, else the request's, else
   * the first of its collections (by id) that names one; null: the fused order stands.
   */
  rerankModel: string | null;
}

export interface ScopeFields {
  workspaceIds?: string[] | undefined;
  collectionIds?: string[] | undefined;
  ragScopes?: RagScope[] | undefined;
  topK?: number | undefined;
  rerankModel?: string | undefined;
}

const LABEL: Partial<Record<IdKind, string>> = { workspace: 'Workspace', collection: 'Collection', document: 'Document' };

/** Whether the request names anything to search at all (else it is a 400 for the route, ungrounded for chat). */
export function hasScope(fields: ScopeFields): boolean {
  return Boolean(fields.workspaceIds?.length || fields.collectionIds?.length || fields.ragScopes?.length);
}

export async function resolveScopes(q: Queryable, tenantId: string, fields: ScopeFields): Promise<SearchScope[]> {
  const ragScopes = fields.ragScopes ?? [];
  ragScopes.forEach((scope, i) => {
    if (!scope.workspaceId && !scope.collectionIds?.length && !scope.documentIds?.length)
      throw validation(`ragScopes[${i}]`, 'needs at least one of workspaceId, collectionIds and documentIds');
  });
  const workspaceIds = unique([...(fields.workspaceIds ?? []), ...ragScopes.flatMap((s) => (s.workspaceId ? [s.workspaceId] : []))]);
  const collectionIds = unique([...(fields.collectionIds ?? []), ...ragScopes.flatMap((s) => s.collectionIds ?? [])]);
  const documentIds = unique(ragScopes.flatMap((s) => s.documentIds ?? []));
  for (const [kind, ids] of [
    ['workspace', workspaceIds],
    ['collection', collectionIds],
    ['document', documentIds],
  ] as const)
    for (const id of ids) if (!isId(kind, id)) throw notFound(LABEL[kind]!);

  const documents = new Map(
    documentIds.length ? (await retrievalRepository.documents(q, tenantId, documentIds)).map((d) => [d.id, d]) : [],
  );
  requireAll(documentIds, documents, 'document');
  if (workspaceIds.length) {
    const found = new Map((await retrievalRepository.existingWorkspaces(q, tenantId, workspaceIds)).map((w) => [w.id, w]));
    requireAll(workspaceIds, found, 'workspace');
  }
  const wanted = unique([...collectionIds, ...[...documents.values()].map((d) => d.collection_id)]);
  const rows = await retrievalRepository.collections(q, tenantId, wanted, workspaceIds);
  const collections = new Map(rows.map((row) => [row.id, toSearchCollection(row)]));
  requireAll(wanted, collections, 'collection');
  const inWorkspaces = (ids: string[]) => [...collections.values()].filter((c) => ids.includes(c.workspaceId));

  const defaultTopK = fields.topK ?? DEFAULT_TOP_K;
  const scopes: SearchScope[] = [];
  if (fields.workspaceIds?.length || fields.collectionIds?.length) {
    const named = (fields.collectionIds ?? []).map((id) => collections.get(id)!);
    const scoped = uniqueById([...inWorkspaces(fields.workspaceIds ?? []), ...named]);
    scopes.push({
      collections: scoped,
      documentIds: null,
      topK: defaultTopK,
      minScore: 0,
      rerankModel: fields.rerankModel ?? rerankerOf(scoped),
    });
  }
  for (const scope of ragScopes) {
    let scoped = scope.workspaceId ? inWorkspaces([scope.workspaceId]) : [...collections.values()];
    if (scope.collectionIds?.length) {
      // Narrowing: a collection outside the scope's workspace is not found there.
      for (const id of scope.collectionIds) if (!scoped.some((c) => c.id === id)) throw notFound('Collection');
      scoped = scoped.filter((c) => scope.collectionIds!.includes(c.id));
    }
    let scopedDocuments: string[] | null = null;
    if (scope.documentIds?.length) {
      for (const id of scope.documentIds) if (!scoped.some((c) => c.id === documents.get(id)!.collection_id)) throw notFound('Document');
      scopedDocuments = unique(scope.documentIds);
      scoped = scoped.filter((c) => scopedDocuments!.some((id) => documents.get(id)!.collection_id === c.id));
    }
    scopes.push({
      collections: scoped,
      documentIds: scopedDocuments,
      topK: scope.topK ?? defaultTopK,
      minScore: scope.minScore ?? 0,
      rerankModel: scope.rerankModel ?? fields.rerankModel ?? rerankerOf(scoped),
    });
  }
  return scopes;
}

function toSearchCollection(row: CollectionRow): SearchCollection {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    language: row.language,
    embedder: row.embedding_model && row.embedding_dimensions ? { model: row.embedding_model, dimensions: row.embedding_dimensions } : null,
    chunkCount: Number(row.chunk_count),
    totalLength: Number(row.total_length),
    rerankModel: row.rerank_model,
  };
}

/** The reranker collections searched together name: the first (by id) that names one. */
function rerankerOf(collections: SearchCollection[]): string | null {
  return [...collections].sort((a, b) => (a.id < b.id ? -1 : 1)).find((c) => c.rerankModel !== null)?.rerankModel ?? null;
}

function requireAll(ids: string[], found: Map<string, unknown>, kind: IdKind): void {
  for (const id of ids) if (!found.has(id)) throw notFound(LABEL[kind]!);
}

const unique = (ids: string[]) => [...new Set(ids)];
const uniqueById = (collections: SearchCollection[]) => [...new Map(collections.map((c) => [c.id, c])).values()];
