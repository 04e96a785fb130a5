// Request fields the threads API's objects share (assistants, threads, messages, and
// the runs that use them): OpenAI's metadata bounds, the grounding scope (the tenant's
// own extension), the tool fields we do not support yet, and OpenAI's 404 wording.
import { Type } from '@fastify/type-provider-typebox';
import { AppError, validation } from '../../../platform/errors.js';
import { isId, type IdKind } from '../../../platform/ids.js';
import { MAX_SCOPE_IDS, type CheckScope, type ScopeIds } from '../../grounding.js';
import type { StoredScope } from '../history/repository.js';

export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY = 64;
export const MAX_METADATA_VALUE = 512;

/** OpenAI's metadata: up to 16 string pairs, keys up to 64 characters, values up to 512. */
export const Metadata = Type.Record(Type.String(), Type.String({ maxLength: MAX_METADATA_VALUE, text: 'multiline' }), {
  maxProperties: MAX_METADATA_PAIRS,
  propertyNames: { type: 'string', maxLength: MAX_METADATA_KEY },
});
/** `null` clears it (as OpenAI takes it). */
export const MetadataField = Type.Optional(Type.Union([Metadata, Type.Null()]));

const Id = Type.String({ minLength: 1, maxLength: 200 });
/** The grounding scope of a thread, assistant or run: the tenant's workspaces and collections. */
export const ScopeFields = {
  workspace_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_SCOPE_IDS })),
  collection_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_SCOPE_IDS })),
};

/** OpenAI's tool fields: accepted only empty until tools are supported. */
export const ToolFields = {
  tools: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 128 })),
  tool_resources: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
};

/** 400 for tools or tool resources: not supported yet, rather than silently ignored. */
export function refuseTools(body: { tools?: unknown[] | undefined; tool_resources?: object | null | undefined }): void {
  if (body.tools && body.tools.length > 0)
    throw validation('tools', 'tools are not supported yet: send an empty list or leave the field out');
  if (body.tool_resources && Object.keys(body.tool_resources).length > 0)
    throw validation('tool_resources', 'tool resources are not supported yet: ground answers with workspace_ids or collection_ids');
}

/**
 * The scope a request asks for, checked to be the tenant's (404 otherwise), merged over
 * `current`: a field left out keeps its ids, an empty list clears them. Null when empty.
 */
export async function scopeOf(
  checkScope: CheckScope,
  tenantId: string,
  body: { workspace_ids?: string[] | undefined; collection_ids?: string[] | undefined },
  current: StoredScope | null = null,
): Promise<StoredScope | null> {
  const scope: ScopeIds = {
    workspaceIds: body.workspace_ids ? unique(body.workspace_ids) : (current?.workspaceIds ?? []),
    collectionIds: body.collection_ids ? unique(body.collection_ids) : (current?.collectionIds ?? []),
  };
  await checkScope(tenantId, {
    ...(body.workspace_ids ? { workspaceIds: scope.workspaceIds } : {}),
    ...(body.collection_ids ? { collectionIds: scope.collectionIds } : {}),
  });
  return scope.workspaceIds!.length || scope.collectionIds!.length ? scope : null;
}

const unique = (ids: string[]) => [...new Set(ids)];

const NOUN: Partial<Record<IdKind, string>> = { assistant: 'assistant', thread: 'thread', message: 'message', run: 'run' };

/** OpenAI's 404: "No thread found with id 'thread_…'." */
export const notFoundWithId = (kind: IdKind, id: string) => new AppError('NOT_FOUND', `No ${NOUN[kind] ?? kind} found with id '${id}'.`);

/** 404 without a query for an id not shaped like its kind. */
export function requireIdShape(kind: IdKind, id: string): void {
  if (!isId(kind, id)) throw notFoundWithId(kind, id);
}
