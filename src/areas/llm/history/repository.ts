// SQL for the platform-kept history: conversations (persisted chat) and threads, and
// their items. Every statement filters by tenant, and reads of a conversation by its
// owner too (owner.ts): the tenant and owner come from the credential, never the request.
import type { Queryable } from '../../../platform/db/database.js';

import type { ContentPart, ToolCall } from '../../../engines/types.js';

/** `response`: the conversation a `previous_response_id` chain builds on (llm/responses). */
export type Surface = 'chat' | 'thread' | 'response';
/** `developer` and `tool` items are the Responses API's only; the other surfaces write the first three. */
export type ItemRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** A grounding scope kept with a thread or an assistant (the request's workspace_ids, collection_ids). */
export interface StoredScope {
  workspaceIds?: string[];
  collectionIds?: string[];
}

/** What an item holds beyond its text (migration 0008): null for plain text. */
export interface ItemPayload {
  /** The content as parts (text and images); `content` holds their text. */
  parts?: ContentPart[];
  /** An assistant item's function calls. */
  tool_calls?: ToolCall[];
  /** A tool item: the call it answers. */
  tool_call_id?: string;
  /** A Responses API item the platform made running MCP tools (responses/mcp-items.ts): output, not input. */
  mcp?: unknown[];
  /** A Responses API `mcp_approval_response` input item (responses/mcp-items.ts). */
  mcp_approval?: { approval_request_id: string; approve: boolean; reason?: string | null };
}

export interface ConversationRow {
  id: string;
  tenant_id: string;
  owner: string;
  surface: Surface;
  title: string | null;
  metadata: Record<string, string>;
  grounding: StoredScope | null;
  item_count: number;
  active_run_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ItemRow {
  id: string;
  conversation_id: string;
  tenant_id: string;
  position: number;
  role: ItemRole;
  content: string;
  status: ItemStatus;
  incomplete_reason: string | null;
  run_id: string | null;
  assistant_id: string | null;
  model: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  grounding: unknown;
  metadata: Record<string, string>;
  payload: ItemPayload | null;
  created_at: Date;
  completed_at: Date | null;
}

export type NewConversation = Pick<ConversationRow, 'id' | 'tenant_id' | 'owner' | 'surface'> &
  Partial<Pick<ConversationRow, 'title' | 'metadata' | 'grounding'>>;

export type NewItem = Pick<ItemRow, 'id' | 'conversation_id' | 'tenant_id' | 'role' | 'content' | 'status'> &
  Partial<Pick<ItemRow, 'run_id' | 'assistant_id' | 'model' | 'metadata' | 'grounding' | 'usage' | 'incomplete_reason' | 'payload'>>;

/** What a finished (or cut short) generation writes into its item. */
export interface ItemOutcome {
  content: string;
  status: Exclude<ItemStatus, 'in_progress'>;
  incompleteReason?: string | null;
  usage?: ItemRow['usage'];
  grounding?: unknown;
  model?: string;
  /** The function calls the generation made (kept with the item's payload). */
  toolCalls?: ToolCall[];
}

/** Keyset paging: `limit` rows after or before an item/conversation id, oldest or newest first. */
export interface Page {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
  before?: string;
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

export const conversationRepository = {
  async insert(q: Queryable, row: NewConversation): Promise<ConversationRow> {
    const [created] = await q.query<ConversationRow>(
      `INSERT INTO conversations (id, tenant_id, owner, surface, title, metadata, grounding)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::jsonb, '{}'::jsonb), $7::jsonb) RETURNING *`,
      [row.id, row.tenant_id, row.owner, row.surface, row.title ?? null, json(row.metadata), json(row.grounding)],
    );
    return created!;
  },

  /** The owner's conversation of that surface, or undefined (another owner's, tenant's or surface's is not there). */
  async get(q: Queryable, tenantId: string, owner: string, surface: Surface, id: string): Promise<ConversationRow | undefined> {
    const [row] = await q.query<ConversationRow>(
      'SELECT * FROM conversations WHERE tenant_id = $1 AND owner = $2 AND surface = $3 AND id = $4',
      [tenantId, owner, surface, id],
    );
    return row;
  },

  /** As get, with the row locked until the transaction ends (appends, run starts). */
  async lock(q: Queryable, tenantId: string, owner: string, surface: Surface, id: string): Promise<ConversationRow | undefined> {
    const [row] = await q.query<ConversationRow>(
      'SELECT * FROM conversations WHERE tenant_id = $1 AND owner = $2 AND surface = $3 AND id = $4 FOR UPDATE',
      [tenantId, owner, surface, id],
    );
    return row;
  },

  /**
   * The owner's chat conversations, newest activity first, after the conversation `afterId`
   * (the last of the previous page, checked as the owner's by the caller); `pattern` (ILIKE,
   * escaped by areas/paging.ts) matching the title, or null. The cursor's time is read in
   * the database: a JS Date holds milliseconds, PostgreSQL microseconds, and a conversation
   * active in the cursor's millisecond would be skipped.
   */
  async listByActivity(q: Queryable, tenantId: string, owner: string, limit: number, afterId?: string, pattern: string | null = null) {
    return q.query<ConversationRow>(
      `SELECT * FROM conversations
        WHERE tenant_id = $1 AND owner = $2 AND surface = 'chat'
          AND ($4::text IS NULL OR (updated_at, id) < (SELECT c.updated_at, c.id FROM conversations c WHERE c.tenant_id = $1 AND c.id = $4))
          AND ($5::text IS NULL OR title ILIKE $5 ESCAPE '\\')
        ORDER BY updated_at DESC, id DESC LIMIT $3`,
      [tenantId, owner, limit, afterId ?? null, pattern],
    );
  },

  async countChats(q: Queryable, tenantId: string, owner: string, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM conversations
        WHERE tenant_id = $1 AND owner = $2 AND surface = 'chat' AND ($3::text IS NULL OR title ILIKE $3 ESCAPE '\\')`,
      [tenantId, owner, pattern],
    );
    return row!.n;
  },

  async listById(q: Queryable, tenantId: string, owner: string, surface: Surface, page: Page) {
    const op = page.order === 'asc' ? '>' : '<';
    const back = page.order === 'asc' ? '<' : '>';
    return q.query<ConversationRow>(
      `SELECT * FROM conversations
        WHERE tenant_id = $1 AND owner = $2 AND surface = $3
          AND ($5::text IS NULL OR id ${op} $5) AND ($6::text IS NULL OR id ${back} $6)
        ORDER BY id ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $4`,
      [tenantId, owner, surface, page.limit, page.after ?? null, page.before ?? null],
    );
  },

  async update(
    q: Queryable,
    tenantId: string,
    owner: string,
    surface: Surface,
    id: string,
    patch: { title?: string | null; metadata?: Record<string, string>; grounding?: StoredScope | null },
  ): Promise<ConversationRow | undefined> {
    const [row] = await q.query<ConversationRow>(
      `UPDATE conversations SET
         title = CASE WHEN $5::boolean THEN $6 ELSE title END,
         metadata = COALESCE($7::jsonb, metadata),
         grounding = CASE WHEN $8::boolean THEN $9::jsonb ELSE grounding END,
         updated_at = now()
       WHERE tenant_id = $1 AND owner = $2 AND surface = $3 AND id = $4 RETURNING *`,
      [
        tenantId,
        owner,
        surface,
        id,
        patch.title !== undefined,
        patch.title ?? null,
        json(patch.metadata),
        patch.grounding !== undefined,
        json(patch.grounding),
      ],
    );
    return row;
  },

  /** Deletes the conversation with its items and runs (cascade). */
  async delete(q: Queryable, tenantId: string, owner: string, surface: Surface, id: string): Promise<boolean> {
    const rows = await q.query('DELETE FROM conversations WHERE tenant_id = $1 AND owner = $2 AND surface = $3 AND id = $4 RETURNING id', [
      tenantId,
      owner,
      surface,
      id,
    ]);
    return rows.length > 0;
  },

  /**
   * Marks `runId` as the conversation's active run, if none is: false when another run
   * is active. The one-active-run rule, atomic without a lock held across the run.
   */
  async claimActiveRun(q: Queryable, conversationId: string, runId: string): Promise<boolean> {
    const rows = await q.query(
      'UPDATE conversations SET active_run_id = $2, updated_at = now() WHERE id = $1 AND active_run_id IS NULL RETURNING id',
      [conversationId, runId],
    );
    return rows.length > 0;
  },

  async releaseActiveRun(q: Queryable, conversationId: string, runId: string): Promise<void> {
    await q.query('UPDATE conversations SET active_run_id = NULL WHERE id = $1 AND active_run_id = $2', [conversationId, runId]);
  },
};

export const itemRepository = {
  /** Appends an item at the conversation's next position (the conversation row is locked for it). */
  async append(q: Queryable, item: NewItem): Promise<ItemRow> {
    const [created] = await q.query<ItemRow>(
      `WITH next AS (
         UPDATE conversations SET item_count = item_count + 1, updated_at = now()
          WHERE id = $2 AND tenant_id = $3 RETURNING item_count
       )
       INSERT INTO conversation_items
         (id, conversation_id, tenant_id, position, role, content, status, run_id, assistant_id, model, metadata, grounding, usage, incomplete_reason, payload, completed_at)
       SELECT $1, $2, $3, next.item_count, $4, $5, $6, $7, $8, $9, COALESCE($10::jsonb, '{}'::jsonb), $11::jsonb, $12::jsonb, $13, $14::jsonb,
              CASE WHEN $6 = 'in_progress' THEN NULL ELSE now() END
         FROM next
       RETURNING *`,
      [
        item.id,
        item.conversation_id,
        item.tenant_id,
        item.role,
        item.content,
        item.status,
        item.run_id ?? null,
        item.assistant_id ?? null,
        item.model ?? null,
        json(item.metadata),
        json(item.grounding),
        json(item.usage),
        item.incomplete_reason ?? null,
        json(item.payload),
      ],
    );
    if (!created) throw new Error(`conversation ${item.conversation_id} is gone`);
    return created;
  },

  async get(q: Queryable, tenantId: string, conversationId: string, id: string): Promise<ItemRow | undefined> {
    const [row] = await q.query<ItemRow>('SELECT * FROM conversation_items WHERE tenant_id = $1 AND conversation_id = $2 AND id = $3', [
      tenantId,
      conversationId,
      id,
    ]);
    return row;
  },

  /** An item by id, for the executor's own writes (its run already names it). */
  async byId(q: Queryable, id: string): Promise<ItemRow | undefined> {
    const [row] = await q.query<ItemRow>('SELECT * FROM conversation_items WHERE id = $1', [id]);
    return row;
  },

  /** A page of the conversation's items in position order; `after`/`before` are item ids. */
  async list(q: Queryable, tenantId: string, conversationId: string, page: Page & { runId?: string }): Promise<ItemRow[]> {
    const op = page.order === 'asc' ? '>' : '<';
    const back = page.order === 'asc' ? '<' : '>';
    const positionOf = (param: string) => `(SELECT position FROM conversation_items WHERE conversation_id = $2 AND id = ${param})`;
    return q.query<ItemRow>(
      `SELECT * FROM conversation_items
        WHERE tenant_id = $1 AND conversation_id = $2
          AND ($4::text IS NULL OR position ${op} ${positionOf('$4')})
          AND ($5::text IS NULL OR position ${back} ${positionOf('$5')})
          AND ($6::text IS NULL OR run_id = $6)
        ORDER BY position ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $3`,
      [tenantId, conversationId, page.limit, page.after ?? null, page.before ?? null, page.runId ?? null],
    );
  },

  /**
   * The newest items, newest first, for building what the model sees (history/trim.ts
   * stops reading once its budget is spent). Items still being written are left out.
   */
  async newest(q: Queryable, tenantId: string, conversationId: string, limit: number, beforePosition?: number): Promise<ItemRow[]> {
    return q.query<ItemRow>(
      `SELECT * FROM conversation_items
        WHERE tenant_id = $1 AND conversation_id = $2 AND status <> 'in_progress'
          AND ($4::integer IS NULL OR position < $4)
        ORDER BY position DESC LIMIT $3`,
      [tenantId, conversationId, limit, beforePosition ?? null],
    );
  },

  /** Saves what a running generation has produced so far (a crash then loses at most one interval). */
  async saveProgress(q: Queryable, id: string, content: string): Promise<void> {
    await q.query("UPDATE conversation_items SET content = $2 WHERE id = $1 AND status = 'in_progress'", [id, content]);
  },

  /** Writes a generation's outcome into its item, once: an item already finished is left alone (false). */
  async finish(q: Queryable, id: string, outcome: ItemOutcome): Promise<boolean> {
    const rows = await q.query(
      `UPDATE conversation_items SET content = $2, status = $3, incomplete_reason = $4, usage = COALESCE($5::jsonb, usage),
              grounding = COALESCE($6::jsonb, grounding), model = COALESCE($7, model), completed_at = now(),
              payload = CASE WHEN $8::jsonb IS NULL THEN payload ELSE COALESCE(payload, '{}'::jsonb) || jsonb_build_object('tool_calls', $8::jsonb) END
        WHERE id = $1 AND status = 'in_progress' RETURNING id`,
      [
        id,
        outcome.content,
        outcome.status,
        outcome.incompleteReason ?? null,
        json(outcome.usage),
        json(outcome.grounding),
        outcome.model ?? null,
        outcome.toolCalls?.length ? JSON.stringify(outcome.toolCalls) : null,
      ],
    );
    return rows.length > 0;
  },

  async updateMetadata(q: Queryable, tenantId: string, conversationId: string, id: string, metadata: Record<string, string>) {
    const [row] = await q.query<ItemRow>(
      'UPDATE conversation_items SET metadata = $4::jsonb WHERE tenant_id = $1 AND conversation_id = $2 AND id = $3 RETURNING *',
      [tenantId, conversationId, id, JSON.stringify(metadata)],
    );
    return row;
  },

  async delete(q: Queryable, tenantId: string, conversationId: string, id: string): Promise<boolean> {
    const rows = await q.query('DELETE FROM conversation_items WHERE tenant_id = $1 AND conversation_id = $2 AND id = $3 RETURNING id', [
      tenantId,
      conversationId,
      id,
    ]);
    return rows.length > 0;
  },
};
