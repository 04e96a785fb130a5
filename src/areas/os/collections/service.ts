// Collections: the groups of documents retrieval searches, inside a workspace. Plain
// functions over the caller's tenant (always the principal's, never one named in the
// request); the routes are in routes.ts, the SQL in repository.ts.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { requireTenantEditor } from '../../../platform/authorization.js';
import { collectionRepository, type CollectionChange, type CollectionRow } from './repository.js';
import { BUILT_IN_EMBEDDER, resolveEmbedding, type EmbeddingDeps } from './embedding.js';
import type { Collection, CollectionPatch, NewCollection } from './schemas.js';

export interface CollectionDeps extends EmbeddingDeps {
  db: Database;
  /** The ingestion runner, told when a collection waits to be re-embedded. */
  ingestion: { wake(): void };
}

const DEFAULT_LANGUAGE = 'english';

export const toCollection = (row: CollectionRow): Collection => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  description: row.description,
  language: row.language,
  embedding: row.embedding_model === null ? null : { model: row.embedding_model, dimensions: row.embedding_dimensions },
  pendingEmbeddingModel: row.pending_embedding_model,
  rerankModel: row.rerank_model,
  isDefault: row.is_default,
  documentCount: row.document_count,
  chunkCount: row.chunk_count,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The collection, if it is the tenant's; for other features of the area (documents). */
export async function findCollection(q: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}) {
  return isId('collection', id) ? collectionRepository.get(q, tenantId, id, options) : undefined;
}

/** The workspace's default collection, if the workspace is the tenant's. */
export async function findDefaultCollection(q: Queryable, tenantId: string, workspaceId: string) {
  return isId('workspace', workspaceId) ? collectionRepository.getDefault(q, tenantId, workspaceId) : undefined;
}

/**
 * The default collection of a workspace being created, in the caller's transaction
 * (`q`), so that no workspace is ever seen without one.
 */
export async function createDefaultCollection(q: Queryable, deps: Pick<EmbeddingDeps, 'vector'>, tenantId: string, workspaceId: string) {
  const embedding = deps.vector ? BUILT_IN_EMBEDDER : null;
  return collectionRepository.insert(q, {
    id: newId('collection'),
    tenant_id: tenantId,
    workspace_id: workspaceId,
    name: 'Default',
    description: 'Documents uploaded to the workspace itself',
    language: DEFAULT_LANGUAGE,
    is_default: true,
    embedding_model: embedding?.model ?? null,
    embedding_dimensions: embedding?.dimensions ?? null,
    rerank_model: null,
  });
}

export async function listCollections(deps: CollectionDeps, principal: Principal, workspaceId: string): Promise<Collection[]> {
  if (!isId('workspace', workspaceId) || !(await collectionRepository.workspaceExists(deps.db, principal.tenantId, workspaceId)))
    throw notFound('Workspace');
  return (await collectionRepository.list(deps.db, principal.tenantId, workspaceId)).map(toCollection);
}

export async function getCollection(deps: CollectionDeps, principal: Principal, id: string): Promise<Collection> {
  const row = await findCollection(deps.db, principal.tenantId, id);
  if (!row) throw notFound('Collection');
  return toCollection(row);
}

export async function createCollection(
  deps: CollectionDeps,
  principal: Principal,
  workspaceId: string,
  input: NewCollection,
): Promise<Collection> {
  requireTenantEditor(principal, 'collections');
  if (!isId('workspace', workspaceId) || !(await collectionRepository.workspaceExists(deps.db, principal.tenantId, workspaceId)))
    throw notFound('Workspace');
  const language = input.language ?? DEFAULT_LANGUAGE;
  await requireLanguage(deps.db, language);
  const embedding = await resolveEmbedding(deps, principal.tenantId, input.embeddingModel);
  const row = await collectionRepository.insert(deps.db, {
    id: newId('collection'),
    tenant_id: principal.tenantId,
    workspace_id: workspaceId,
    name: input.name,
    description: input.description ?? null,
    language,
    is_default: false,
    embedding_model: embedding?.model ?? null,
    embedding_dimensions: embedding?.dimensions ?? null,
    // Not checked against the nodes now: a reranker that is down or unknown at search time
    // leaves the fused order as it is and the answer says so (retrieval.reranker).
    rerank_model: input.rerankModel ?? null,
  });
  return toCollection(row);
}

export async function updateCollection(
  deps: CollectionDeps,
  principal: Principal,
  id: string,
  patch: CollectionPatch,
): Promise<Collection> {
  requireTenantEditor(principal, 'collections');
  if (!(await findCollection(deps.db, principal.tenantId, id))) throw notFound('Collection');
  if (patch.language !== undefined) await requireLanguage(deps.db, patch.language);
  // Asked before the transaction: the llm area may call a node.
  const embedding = patch.embeddingModel === undefined ? undefined : await resolveEmbedding(deps, principal.tenantId, patch.embeddingModel);
  const row = await deps.db.tx(async (q) => {
    // Locked: writing chunks updates this row (chunk_count), so "no chunks yet" holds until commit.
    const current = await collectionRepository.get(q, principal.tenantId, id, { lock: true });
    if (!current) throw notFound('Collection');
    const change: CollectionChange = { name: patch.name, description: patch.description, rerankModel: patch.rerankModel };
    if (patch.language !== undefined && patch.language !== current.language) {
      if (current.chunk_count > 0)
        throw new AppError(
          'CONFLICT',
          `The collection's chunks are indexed in "${current.language}"; its language can change only while it has no chunks (delete its documents first).`,
        );
      change.language = patch.language;
    }
    if (embedding !== undefined) Object.assign(change, embeddingChange(current, embedding));
    return collectionRepository.update(q, principal.tenantId, id, change);
  });
  if (!row) throw notFound('Collection');
  if (row.pending_embedding_model !== null) deps.ingestion.wake();
  return toCollection(row);
}

/**
 * A new embedder. Retrieval keeps reading the current vectors until the background job
 * has embedded every chunk with the new one and swaps it in; with no chunks (nothing
 * to re-embed) or lexical-only (nothing to compute) it is swapped at once.
 */
function embeddingChange(current: CollectionRow, next: { model: string; dimensions: number | null } | null): CollectionChange {
  if (next?.model === current.embedding_model) return current.pending_embedding_model === null ? {} : { pendingEmbeddingModel: null };
  if (next === null || current.chunk_count === 0)
    return { embedding: next ?? { model: null, dimensions: null }, pendingEmbeddingModel: null };
  return { pendingEmbeddingModel: next.model };
}

export async function deleteCollection(deps: CollectionDeps, principal: Principal, id: string): Promise<void> {
  requireTenantEditor(principal, 'collections');
  const row = await findCollection(deps.db, principal.tenantId, id);
  if (!row) throw notFound('Collection');
  if (row.is_default) throw new AppError('CONFLICT', "A workspace's default collection is deleted only with its workspace.");
  if (!(await collectionRepository.deleteUnlessDefault(deps.db, principal.tenantId, id))) throw notFound('Collection');
}

async function requireLanguage(q: Queryable, language: string): Promise<void> {
  if (await collectionRepository.languageExists(q, language)) return;
  const known = await collectionRepository.languages(q);
  const some = ['english', 'simple', 'german', 'french', 'spanish'].filter((l) => known.includes(l));
  const others = known.filter((l) => !some.includes(l)).slice(0, 5);
  throw validation('language', `must name a text-search configuration of the database, for example ${[...some, ...others].join(', ')}.`);
}
