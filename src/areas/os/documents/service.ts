// Documents: uploads into a collection (stored whole and queued for ingestion, which
// runs elsewhere), reading them and their chunks, deleting them. Plain functions over
// the caller's tenant (always the principal's, never one named in the request).
import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../../../platform/db/database.js';
import type { DocumentsConfig } from '../../../platform/config.js';
import { notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { requireTenantEditor } from '../../../platform/authorization.js';
import { removeDocumentChunks } from '../chunks/store.js';
import { findCollection, findDefaultCollection } from '../collections/service.js';
import type { CollectionRow } from '../collections/repository.js';
import { containsPattern, pageFrom, pageLimit, type ListQuery, type PageOf } from '../../paging.js';
import { detectMediaType } from './detect.js';
import { documentRepository, type ChunkRow, type DocumentRow } from './repository.js';
import { METADATA_MAX_BYTES, METADATA_MAX_DEPTH, type Chunk, type Document, type NewTextDocument } from './schemas.js';
import { fileTooLarge, safeName, type UploadedFile } from './upload.js';
import type { MediaType } from './media-types.js';

export interface DocumentDeps {
  db: Database;
  config: { documents: DocumentsConfig };
  /** The ingestion runner, told that queued documents are waiting (it also polls, so a lost wake-up only delays). */
  ingestion: { wake(): void };
}

/** Where an upload goes: a collection, or a workspace's default collection. */
export type UploadTarget = { collectionId: string } | { workspaceId: string };

export interface Stored {
  documents: Document[];
  /** Whether anything new was stored (202), or every file was already there (200). */
  created: boolean;
}

export const toDocument = (row: DocumentRow): Document => ({
  id: row.id,
  collectionId: row.collection_id,
  workspaceId: row.workspace_id,
  name: row.name,
  mediaType: row.media_type as MediaType,
  bytes: row.bytes,
  sha256: row.sha256,
  status: row.status,
  stage: row.stage,
  error: row.error,
  chunkCount: row.chunk_count,
  metadata: row.metadata,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const toChunk = (row: ChunkRow): Chunk => ({
  id: row.id,
  chunkIndex: row.chunk_index,
  content: row.content,
  title: row.title,
  headingPath: row.heading_path,
  page: row.page,
  tokenCount: row.token_count,
});

/**
 * The collection an upload goes into, checked before a byte of the body is read:
 * who may upload (403) and whether the target is the tenant's (404).
 */
export async function uploadTarget(deps: DocumentDeps, principal: Principal, target: UploadTarget): Promise<CollectionRow> {
  requireTenantEditor(principal, 'documents');
  if ('collectionId' in target) {
    const collection = await findCollection(deps.db, principal.tenantId, target.collectionId);
    if (!collection) throw notFound('Collection');
    return collection;
  }
  const collection = await findDefaultCollection(deps.db, principal.tenantId, target.workspaceId);
  if (!collection) throw notFound('Workspace');
  return collection;
}

/** A document sent as JSON text: the same checks and storage as a file of those bytes. */
export function storeText(deps: DocumentDeps, principal: Principal, collection: CollectionRow, input: NewTextDocument): Promise<Stored> {
  const bytes = Buffer.from(input.text, 'utf8');
  if (bytes.length > deps.config.documents.uploadMaxBytes) throw fileTooLarge(deps.config.documents.uploadMaxBytes);
  return storeDocuments(
    deps,
    principal,
    collection,
    [{ name: safeName(input.name), declaredType: undefined, bytes, textOnly: true }],
    input.metadata,
  );
}

/**
 * Checks every file, then stores them all in one transaction (the document rows,
 * queued; their bytes; the collection's count) and wakes ingestion. A file whose
 * content the collection already holds answers with that document instead of a copy.
 */
export async function storeDocuments(
  deps: DocumentDeps,
  principal: Principal,
  collection: CollectionRow,
  files: UploadedFile[],
  rawMetadata: unknown,
): Promise<Stored> {
  requireTenantEditor(principal, 'documents');
  const metadata = checkMetadata(rawMetadata);
  const prepared = files.map((file) => {
    if (file.bytes.length === 0) throw validation('file', `${JSON.stringify(file.name)} is empty (0 bytes)`);
    return {
      name: file.name,
      bytes: file.bytes,
      mediaType: detectMediaType(file.bytes, file.name, file.declaredType, { textOnly: file.textOnly === true }),
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
    };
  });
  const tenantId = principal.tenantId;
  const { documents, added } = await deps.db.tx(async (q) => {
    // Locked, so the collection cannot be deleted under the upload (that would be a foreign-key failure, not a 404).
    if (!(await findCollection(q, tenantId, collection.id, { lock: true }))) throw notFound('Collection');
    const documents: DocumentRow[] = [];
    let added = 0;
    for (const file of prepared) {
      const row = {
        id: newId('document'),
        tenant_id: tenantId,
        collection_id: collection.id,
        workspace_id: collection.workspace_id,
        name: file.name,
        media_type: file.mediaType,
        bytes: file.bytes.length,
        sha256: file.sha256,
        metadata,
      };
      const created = await documentRepository.insertQueued(q, row, file.bytes);
      if (created) added++;
      const stored = created ?? (await documentRepository.findBySha256(q, tenantId, collection.id, file.sha256));
      if (!stored) throw new Error(`document ${file.sha256} neither inserted nor found`);
      documents.push(stored);
    }
    if (added > 0) await documentRepository.addToDocumentCount(q, tenantId, collection.id, added);
    return { documents, added };
  });
  if (added > 0) deps.ingestion.wake();
  return { documents: documents.map(toDocument), created: added > 0 };
}

/** The metadata of an upload: a JSON object of at most 16 KB whose strings PostgreSQL can store. */
export function checkMetadata(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validation('metadata', 'must be a JSON object');
  // Before anything recursive: JSON.stringify and the checks below overflow the stack on 10,000 levels (a 500).
  if (deeperThan(value, METADATA_MAX_DEPTH))
    throw validation('metadata', `must not nest objects or arrays more than ${METADATA_MAX_DEPTH} levels deep`);
  if (Buffer.byteLength(JSON.stringify(value)) > METADATA_MAX_BYTES)
    throw validation('metadata', `must be a JSON object of at most ${METADATA_MAX_BYTES} bytes`);
  if (!storable(value)) throw validation('metadata', 'must not hold NUL characters or lone surrogates');
  return value as Record<string, unknown>;
}

/** Whether `value` nests objects or arrays more than `limit` levels deep; iterative, and stops at the limit. */
function deeperThan(value: unknown, limit: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > limit) return true;
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item !== 'object' || item === null) continue;
      for (const child of Object.values(item)) if (typeof child === 'object' && child !== null) next.push(child);
    }
    level = next;
  }
  return false;
}

// jsonb refuses \u0000 and lone surrogates: a 500 from the database otherwise.
function storable(value: unknown): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && (value as string & { isWellFormed(): boolean }).isWellFormed();
  if (Array.isArray(value)) return value.every(storable);
  if (typeof value === 'object' && value !== null) return Object.entries(value).every(([key, item]) => storable(key) && storable(item));
  return true;
}

export async function getDocument(deps: DocumentDeps, principal: Principal, id: string): Promise<Document> {
  const row = isId('document', id) ? await documentRepository.get(deps.db, principal.tenantId, id) : undefined;
  if (!row) throw notFound('Document');
  return toDocument(row);
}

/** GET …/documents: a page of the collection's documents, oldest first; `next` is the last one's id. */
export async function listDocuments(
  deps: DocumentDeps,
  principal: Principal,
  collectionId: string,
  query: ListQuery,
): Promise<PageOf<Document>> {
  if (!(await findCollection(deps.db, principal.tenantId, collectionId))) throw notFound('Collection');
  const limit = pageLimit(query.limit, PAGE_RANGE)!;
  if (query.after !== undefined && !isId('document', query.after)) throw validation('after', "must be a document id (a page's next)");
  const pattern = containsPattern(query.q);
  const [rows, total] = await Promise.all([
    documentRepository.list(deps.db, principal.tenantId, collectionId, { limit: limit + 1, after: query.after, pattern }),
    documentRepository.count(deps.db, principal.tenantId, collectionId, pattern),
  ]);
  return pageFrom(rows, limit, total, toDocument, (row) => row.id);
}

/** GET …/chunks: a page of the document's chunks in order; `next` is the last one's index. */
export async function listChunks(deps: DocumentDeps, principal: Principal, documentId: string, query: ListQuery): Promise<PageOf<Chunk>> {
  if (!isId('document', documentId) || !(await documentRepository.get(deps.db, principal.tenantId, documentId))) throw notFound('Document');
  const limit = pageLimit(query.limit, PAGE_RANGE)!;
  if (query.after !== undefined && !/^\d{1,9}$/.test(query.after)) throw validation('after', "must be a chunk index (a page's next)");
  const after = query.after === undefined ? undefined : Number(query.after);
  const pattern = containsPattern(query.q);
  const [rows, total] = await Promise.all([
    documentRepository.chunks(deps.db, principal.tenantId, documentId, { limit: limit + 1, after, pattern }),
    documentRepository.countChunks(deps.db, principal.tenantId, documentId, pattern),
  ]);
  return pageFrom(rows, limit, total, toChunk, (row) => String(row.chunk_index));
}

/** Deletes the document with its chunks (gone from retrieval at once) and its bytes, in one transaction. */
export async function deleteDocument(deps: DocumentDeps, principal: Principal, id: string): Promise<void> {
  requireTenantEditor(principal, 'documents');
  if (!isId('document', id)) throw notFound('Document');
  await deps.db.tx(async (q: Queryable) => {
    const found = await documentRepository.get(q, principal.tenantId, id);
    // The collection first, then the document: the order uploads take them in, so the two never deadlock.
    if (found) await findCollection(q, principal.tenantId, found.collection_id, { lock: true });
    const row = found && (await documentRepository.get(q, principal.tenantId, id, { lock: true }));
    if (!row) throw notFound('Document');
    await removeDocumentChunks(q, principal.tenantId, row.collection_id, row.id);
    await documentRepository.delete(q, principal.tenantId, row.id);
    await documentRepository.addToDocumentCount(q, principal.tenantId, row.collection_id, -1);
  });
}

// 1..200, 50 by default: these lists paged before the others did, and keep their range.
const PAGE_RANGE = { fallback: 50, max: 200 };
