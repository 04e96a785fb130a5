// Assistants: a model with instructions, defaults and a grounding scope that runs use.
// The caller's own (tenant and owner from the credential); another's is a 404.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { AppError } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { CheckScope } from '../../grounding.js';
import { ownerOf } from '../history/owner.js';
import { listOf, pageOf, type List, type ListQuery } from '../history/pages.js';
import type { ModelRouter } from '../router/types.js';
import { notFoundWithId, refuseTools, requireIdShape, scopeOf } from '../threads/fields.js';
import { seconds } from '../threads/objects.js';
import { assistantRepository, type AssistantRow } from './repository.js';
import type { AssistantObject, AssistantPatch, NewAssistant } from './schemas.js';

export interface AssistantDeps {
  db: Database;
  router: Pick<ModelRouter, 'resolveModel'>;
  /** os's check that workspace and collection ids are the tenant's (404 otherwise). */
  checkScope: CheckScope;
}

export function assistantObject(row: AssistantRow): AssistantObject {
  return {
    id: row.id,
    object: 'assistant',
    created_at: seconds(row.created_at)!,
    name: row.name,
    description: row.description,
    model: row.model,
    instructions: row.instructions,
    tools: [],
    tool_resources: {},
    metadata: row.metadata,
    temperature: row.temperature,
    top_p: null,
    response_format: 'auto',
    workspace_ids: row.grounding?.workspaceIds ?? [],
    collection_ids: row.grounding?.collectionIds ?? [],
    max_tokens: row.max_tokens,
  };
}

/**
 * The model must be one the tenant can use (400 naming `model` otherwise); it is kept as
 * given and resolved when a run starts, so `auto` follows the tenant's default. A known
 * model whose nodes are down right now is still accepted: that is an outage, not a mistake.
 */
async function checkModel(deps: AssistantDeps, tenantId: string, model: string): Promise<void> {
  if (model === 'auto') return;
  try {
    await deps.router.resolveModel(tenantId, model);
  } catch (error) {
    if (error instanceof AppError && error.status === 503) return;
    throw error;
  }
}

/** The caller's assistant row, or OpenAI's 404: what a run reads its settings from. */
export async function assistantRow(q: Queryable, principal: Principal, assistantId: string): Promise<AssistantRow> {
  requireIdShape('assistant', assistantId);
  const row = await assistantRepository.get(q, principal.tenantId, ownerOf(principal), assistantId);
  if (!row) throw notFoundWithId('assistant', assistantId);
  return row;
}

export async function createAssistant(deps: AssistantDeps, principal: Principal, body: NewAssistant): Promise<AssistantObject> {
  refuseTools(body);
  await checkModel(deps, principal.tenantId, body.model);
  const grounding = await scopeOf(deps.checkScope, principal.tenantId, body);
  const row = await assistantRepository.insert(deps.db, {
    id: newId('assistant'),
    tenant_id: principal.tenantId,
    owner: ownerOf(principal),
    name: body.name ?? null,
    description: body.description ?? null,
    instructions: body.instructions ?? null,
    model: body.model,
    grounding,
    temperature: body.temperature ?? null,
    max_tokens: body.max_tokens ?? null,
    metadata: body.metadata ?? {},
  });
  return assistantObject(row);
}

export async function getAssistant(deps: Pick<AssistantDeps, 'db'>, principal: Principal, assistantId: string): Promise<AssistantObject> {
  return assistantObject(await assistantRow(deps.db, principal, assistantId));
}

/** The assistant as it is now, or undefined: an idempotent create's replay. */
export async function findAssistant(
  deps: Pick<AssistantDeps, 'db'>,
  principal: Principal,
  assistantId: string,
): Promise<AssistantObject | undefined> {
  const row = isId('assistant', assistantId)
    ? await assistantRepository.get(deps.db, principal.tenantId, ownerOf(principal), assistantId)
    : undefined;
  return row && assistantObject(row);
}

export async function listAssistants(
  deps: Pick<AssistantDeps, 'db'>,
  principal: Principal,
  query: ListQuery,
): Promise<List<AssistantObject>> {
  const page = pageOf(query, (id) => isId('assistant', id));
  return listOf(await assistantRepository.list(deps.db, principal.tenantId, ownerOf(principal), page), page, assistantObject);
}

/** POST /assistants/{id}: the fields given replace the stored ones (null clears a nullable one). */
export async function updateAssistant(
  deps: AssistantDeps,
  principal: Principal,
  assistantId: string,
  body: AssistantPatch,
): Promise<AssistantObject> {
  refuseTools(body);
  const current = await assistantRow(deps.db, principal, assistantId);
  if (body.model !== undefined) await checkModel(deps, principal.tenantId, body.model);
  const changesScope = body.workspace_ids !== undefined || body.collection_ids !== undefined;
  const pick = <K extends 'name' | 'description' | 'instructions' | 'temperature' | 'max_tokens'>(key: K) =>
    body[key] === undefined ? current[key] : (body[key] ?? null);
  const row = await assistantRepository.update(deps.db, principal.tenantId, ownerOf(principal), assistantId, {
    name: pick('name'),
    description: pick('description'),
    instructions: pick('instructions'),
    temperature: pick('temperature'),
    max_tokens: pick('max_tokens'),
    model: body.model ?? current.model,
    grounding: changesScope ? await scopeOf(deps.checkScope, principal.tenantId, body, current.grounding) : current.grounding,
    metadata: body.metadata === undefined ? current.metadata : (body.metadata ?? {}),
  });
  if (!row) throw notFoundWithId('assistant', assistantId);
  return assistantObject(row);
}

export async function deleteAssistant(deps: Pick<AssistantDeps, 'db'>, principal: Principal, assistantId: string) {
  requireIdShape('assistant', assistantId);
  if (!(await assistantRepository.delete(deps.db, principal.tenantId, ownerOf(principal), assistantId)))
    throw notFoundWithId('assistant', assistantId);
  return { id: assistantId, object: 'assistant.deleted' as const, deleted: true as const };
}
