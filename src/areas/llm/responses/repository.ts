// SQL of the Responses API beyond the history and run repositories: a response is a
// run (its id `resp_…`); its input items are the items it appended (run_id = its id,
// other than its output item); a branch of a conversation starts as a copy of it.
// Every read filters by tenant and owner; a response stored with `store: false` is
// never found (it is deleted once generated; this also hides it while it generates).
import type { Queryable } from '../../../platform/db/database.js';
import { newId } from '../../../platform/ids.js';
import type { ItemRow, Page } from '../history/repository.js';
import type { RunParams, RunRow } from '../runs/repository.js';
import type { FunctionTool, ResponseToolChoice } from './options.js';
import type { McpToolSpec } from './mcp-tools.js';

/** What a response keeps in its run's params beyond a thread run's. */
export interface ResponseParams extends RunParams {
  tools?: (FunctionTool | McpToolSpec)[];
  tool_choice?: ResponseToolChoice;
  parallel_tool_calls?: boolean;
  top_p?: number;
  format?: Record<string, unknown>;
  user?: string;
  previous_response_id?: string;
  /** The conversation the request named (`conversation`), when it named one. */
  conversation?: string;
  store?: boolean;
}

export type ResponseRow = RunRow & { params: ResponseParams };

export const responseRepository = {
  async find(q: Queryable, tenantId: string, owner: string, id: string): Promise<ResponseRow | undefined> {
    const [row] = await q.query<ResponseRow>(
      `SELECT * FROM runs WHERE tenant_id = $1 AND owner = $2 AND id = $3 AND (params->>'store') IS DISTINCT FROM 'false'`,
      [tenantId, owner, id],
    );
    return row;
  },

  /** Whether the conversation holds an item after `position` (then a response continuing at `position` starts a branch). */
  async hasItemsAfter(q: Queryable, conversationId: string, position: number): Promise<boolean> {
    const rows = await q.query('SELECT 1 FROM conversation_items WHERE conversation_id = $1 AND position > $2 LIMIT 1', [
      conversationId,
      position,
    ]);
    return rows.length > 0;
  },

  /**
   * Copies the items of `from` up to `position` into the empty conversation `to`, at
   * the same positions (new ids; run ids kept: they name the runs that wrote them).
   */
  async copyItems(q: Queryable, tenantId: string, from: string, to: string, position: number): Promise<void> {
    const ids = await q.query<{ id: string }>(
      'SELECT id FROM conversation_items WHERE tenant_id = $1 AND conversation_id = $2 AND position <= $3 ORDER BY position',
      [tenantId, from, position],
    );
    if (ids.length === 0) return;
    await q.query(
      `INSERT INTO conversation_items
         (id, conversation_id, tenant_id, position, role, content, status, incomplete_reason, run_id, assistant_id, model,
          usage, grounding, metadata, payload, created_at, completed_at)
       SELECT n.new_id, $2, i.tenant_id, i.position, i.role, i.content, i.status, i.incomplete_reason, i.run_id, i.assistant_id, i.model,
              i.usage, i.grounding, i.metadata, i.payload, i.created_at, i.completed_at
         FROM conversation_items i JOIN unnest($3::text[], $4::text[]) AS n(old_id, new_id) ON n.old_id = i.id
        WHERE i.tenant_id = $1`,
      [tenantId, to, ids.map((r) => r.id), ids.map(() => newId('message'))],
    );
    await q.query('UPDATE conversations SET item_count = $2 WHERE id = $1', [to, position]);
  },

  /** A page of the response's input items (position order); `after`/`before` are item ids. */
  async inputItems(q: Queryable, run: ResponseRow, page: Page): Promise<ItemRow[]> {
    const op = page.order === 'asc' ? '>' : '<';
    const back = page.order === 'asc' ? '<' : '>';
    const positionOf = (param: string) => `(SELECT position FROM conversation_items WHERE conversation_id = $2 AND id = ${param})`;
    return q.query<ItemRow>(
      `SELECT * FROM conversation_items
        WHERE tenant_id = $1 AND conversation_id = $2 AND run_id = $3 AND id IS DISTINCT FROM $4 AND payload->'mcp' IS NULL
          AND ($6::text IS NULL OR position ${op} ${positionOf('$6')})
          AND ($7::text IS NULL OR position ${back} ${positionOf('$7')})
        ORDER BY position ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $5`,
      [run.tenant_id, run.conversation_id, run.id, run.message_id, page.limit, page.after ?? null, page.before ?? null],
    );
  },

  /** The items a response running MCP tools output (mcp-items.ts): its MCP items and its answer, in order. */
  async outputItems(q: Queryable, run: Pick<ResponseRow, 'tenant_id' | 'conversation_id' | 'id' | 'message_id'>): Promise<ItemRow[]> {
    return q.query<ItemRow>(
      `SELECT * FROM conversation_items
        WHERE tenant_id = $1 AND conversation_id = $2 AND run_id = $3 AND (payload->'mcp' IS NOT NULL OR id = $4)
        ORDER BY position`,
      [run.tenant_id, run.conversation_id, run.id, run.message_id],
    );
  },

  /** A model turn's calls as they stay in the history, and the MCP items made of them. */
  async setTurnCalls(q: Queryable, itemId: string, toolCalls: unknown[], mcp: unknown[]): Promise<void> {
    await q.query(
      `UPDATE conversation_items
          SET payload = (COALESCE(payload, '{}'::jsonb) - 'tool_calls') || jsonb_build_object('mcp', $3::jsonb)
                        || CASE WHEN $2::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('tool_calls', $2::jsonb) END
        WHERE id = $1`,
      [itemId, toolCalls.length ? JSON.stringify(toolCalls) : null, JSON.stringify(mcp)],
    );
  },

  /**
   * A response whose model turn called MCP tools goes on with another turn: the run the
   * executor ended `completed` is queued again (undefined when it ended otherwise).
   */
  async reopen(q: Queryable, runId: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      `UPDATE runs SET status = 'queued', completed_at = NULL, last_error = NULL, incomplete_details = NULL
        WHERE id = $1 AND status = 'completed' RETURNING *`,
      [runId],
    );
    return row;
  },

  /** The run's usage over all its turns; `incomplete`: it ended at the step limit. */
  async endSteps(q: Queryable, runId: string, usage: RunRow['usage'], incomplete?: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      `UPDATE runs SET usage = $2::jsonb,
              status = CASE WHEN $3::text IS NULL THEN status ELSE 'incomplete' END,
              incomplete_details = CASE WHEN $3::text IS NULL THEN incomplete_details ELSE jsonb_build_object('reason', $3::text) END
        WHERE id = $1 RETURNING *`,
      [runId, JSON.stringify(usage), incomplete ?? null],
    );
    return row;
  },

  /** Deletes the response and the items it appended; a conversation of its own left empty goes too. */
  async delete(q: Queryable, run: ResponseRow): Promise<void> {
    await q.query('DELETE FROM conversation_items WHERE tenant_id = $1 AND conversation_id = $2 AND run_id = $3', [
      run.tenant_id,
      run.conversation_id,
      run.id,
    ]);
    await q.query('DELETE FROM runs WHERE tenant_id = $1 AND id = $2', [run.tenant_id, run.id]);
    await q.query(
      `DELETE FROM conversations c WHERE c.id = $1 AND c.tenant_id = $2 AND c.surface = 'response'
          AND NOT EXISTS (SELECT 1 FROM conversation_items i WHERE i.conversation_id = c.id)`,
      [run.conversation_id, run.tenant_id],
    );
  },
};
