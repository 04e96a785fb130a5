// Reading and deleting responses, and listing a response's input items. Owner rule
// (history/owner.ts): a person's responses are theirs alone, what the tenant's API
// keys made is shared by its keys; another tenant's or owner's id is OpenAI's 404.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { validation } from '../../../platform/errors.js';
import { isId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import type { CheckScope } from '../../grounding.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { McpCallAudit } from '../mcp/calls/audit.js';
import type { ToolSource } from '../mcp/tool-source.js';
import type { GroundingDeps } from '../grounding/ground.js';
import { ownerOf } from '../history/owner.js';
import { itemRepository } from '../history/repository.js';
import { listOf, pageOf, type List, type ListQuery } from '../history/pages.js';
import type { ModelRouter } from '../router/types.js';
import type { RunExecutor } from '../runs/executor.js';
import { OPEN_STATUSES } from '../runs/repository.js';
import { responseNotFound } from './create.js';
import { inputItemObject, responseObject } from './objects.js';
import { mcpOutputOf } from './mcp-items.js';
import { responseRepository, type ResponseRow } from './repository.js';
import type { InputItem, ResponseObject } from './schemas.js';

export interface ResponseDeps {
  db: Database;
  router: Pick<ModelRouter, 'resolveModel'>;
  runs: Pick<RunExecutor, 'execute'>;
  calls: OpenCalls;
  grounding: GroundingDeps;
  /** os's check that workspace and collection ids are the tenant's (404 otherwise). */
  checkScope: CheckScope;
  heartbeatMs: number;
  /** Retry-After for 503s the engines cause. */
  retryAfterSeconds: number;
  /** The MCP tools a caller is granted and their calls (mcp/tool-source.ts); read per request, so tests may swap it. */
  mcpTools: () => ToolSource;
  /** Every MCP call a response runs is one audit record, as the MCP endpoint's are. */
  mcpAudit: McpCallAudit;
}

export async function findResponse(db: Queryable, principal: Principal, id: string): Promise<ResponseRow> {
  const run = isId('response', id) ? await responseRepository.find(db, principal.tenantId, ownerOf(principal), id) : undefined;
  if (!run) throw responseNotFound(id);
  return run;
}

export async function getResponse(deps: Pick<ResponseDeps, 'db'>, principal: Principal, id: string): Promise<ResponseObject> {
  const run = await findResponse(deps.db, principal, id);
  const item = run.message_id ? await itemRepository.byId(deps.db, run.message_id) : undefined;
  const ranMcp = run.params.tools?.some((tool) => tool.type === 'mcp');
  return responseObject(run, item, ranMcp ? mcpOutputOf(await responseRepository.outputItems(deps.db, run), run.message_id) : undefined);
}

export async function deleteResponse(deps: Pick<ResponseDeps, 'db'>, principal: Principal, id: string) {
  await deps.db.tx(async (q) => {
    const run = await findResponse(q, principal, id);
    if (OPEN_STATUSES.includes(run.status))
      throw validation('response_id', `response ${id} is still being generated: delete it once it ends`);
    await responseRepository.delete(q, run);
  });
  return { id, object: 'response' as const, deleted: true as const };
}

export async function listInputItems(
  deps: Pick<ResponseDeps, 'db'>,
  principal: Principal,
  id: string,
  query: ListQuery,
): Promise<List<InputItem>> {
  const run = await findResponse(deps.db, principal, id);
  const page = pageOf(query, (cursor) => isId('message', cursor));
  return listOf(await responseRepository.inputItems(deps.db, run, page), page, inputItemObject);
}
