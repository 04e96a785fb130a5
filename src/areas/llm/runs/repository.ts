// SQL for runs (one generation each, on either surface) and their stored stream
// events. Reads filter by tenant and owner; the executor's own writes go by run id.
import type { Queryable } from '../../../platform/db/database.js';
import type { Page } from '../history/repository.js';

export type RunStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelling' | 'cancelled' | 'expired';
export type TerminalStatus = Extract<RunStatus, 'completed' | 'incomplete' | 'failed' | 'cancelled' | 'expired'>;
export const OPEN_STATUSES: readonly RunStatus[] = ['queued', 'in_progress', 'cancelling'];

export interface RunUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** OpenAI's last_error codes: `server_error`, `rate_limit_exceeded`, `invalid_prompt`. */
export interface RunError {
  code: 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt';
  message: string;
}

export interface RunParams {
  temperature?: number;
  max_tokens?: number;
  additional_instructions?: string;
  /** The grounding scope the run was asked with (request fields, else the thread's, else the assistant's). */
  grounding?: { workspaceIds?: string[]; collectionIds?: string[] };
  stream?: boolean;
}

export interface RunRow {
  id: string;
  tenant_id: string;
  conversation_id: string;
  owner: string;
  assistant_id: string | null;
  status: RunStatus;
  model: string;
  instructions: string | null;
  params: RunParams;
  message_id: string | null;
  usage: RunUsage | null;
  last_error: RunError | null;
  incomplete_details: { reason: string } | null;
  metadata: Record<string, string>;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  failed_at: Date | null;
  expires_at: Date | null;
  lease_owner: string | null;
  lease_until: Date | null;
}

export type NewRun = Pick<RunRow, 'id' | 'tenant_id' | 'conversation_id' | 'owner' | 'model'> &
  Partial<Pick<RunRow, 'assistant_id' | 'instructions' | 'params' | 'metadata' | 'expires_at' | 'message_id'>>;

/** How a run ended: its status and what OpenAI's run object reports with it. */
export interface RunEnding {
  status: TerminalStatus;
  usage?: RunUsage | null;
  lastError?: RunError | null;
  incompleteDetails?: { reason: string } | null;
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

export const runRepository = {
  async insert(q: Queryable, run: NewRun): Promise<RunRow> {
    const [row] = await q.query<RunRow>(
      `INSERT INTO runs (id, tenant_id, conversation_id, owner, assistant_id, status, model, instructions, params, metadata, expires_at, message_id)
       VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, COALESCE($8::jsonb, '{}'::jsonb), COALESCE($9::jsonb, '{}'::jsonb), $10, $11)
       RETURNING *`,
      [
        run.id,
        run.tenant_id,
        run.conversation_id,
        run.owner,
        run.assistant_id ?? null,
        run.model,
        run.instructions ?? null,
        json(run.params),
        json(run.metadata),
        run.expires_at ?? null,
        run.message_id ?? null,
      ],
    );
    return row!;
  },

  async get(q: Queryable, tenantId: string, owner: string, conversationId: string, id: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>('SELECT * FROM runs WHERE tenant_id = $1 AND owner = $2 AND conversation_id = $3 AND id = $4', [
      tenantId,
      owner,
      conversationId,
      id,
    ]);
    return row;
  },

  /** The owner's run by its id alone (an idempotent replay of POST /threads/runs knows no thread yet). */
  async find(q: Queryable, tenantId: string, owner: string, id: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>('SELECT * FROM runs WHERE tenant_id = $1 AND owner = $2 AND id = $3', [tenantId, owner, id]);
    return row;
  },

  async updateMetadata(
    q: Queryable,
    tenantId: string,
    owner: string,
    conversationId: string,
    id: string,
    metadata: Record<string, string>,
  ): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      'UPDATE runs SET metadata = $5::jsonb WHERE tenant_id = $1 AND owner = $2 AND conversation_id = $3 AND id = $4 RETURNING *',
      [tenantId, owner, conversationId, id, JSON.stringify(metadata)],
    );
    return row;
  },

  async byId(q: Queryable, id: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>('SELECT * FROM runs WHERE id = $1', [id]);
    return row;
  },

  async list(q: Queryable, tenantId: string, owner: string, conversationId: string, page: Page): Promise<RunRow[]> {
    const op = page.order === 'asc' ? '>' : '<';
    const back = page.order === 'asc' ? '<' : '>';
    return q.query<RunRow>(
      `SELECT * FROM runs WHERE tenant_id = $1 AND owner = $2 AND conversation_id = $3
          AND ($5::text IS NULL OR id ${op} $5) AND ($6::text IS NULL OR id ${back} $6)
        ORDER BY id ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $4`,
      [tenantId, owner, conversationId, page.limit, page.after ?? null, page.before ?? null],
    );
  },

  async setMessage(q: Queryable, id: string, messageId: string): Promise<void> {
    await q.query('UPDATE runs SET message_id = $2 WHERE id = $1', [id, messageId]);
  },

  /** queued → in_progress under this process's lease; undefined when the run is no longer queued (cancelled meanwhile). */
  async start(q: Queryable, id: string, leaseOwner: string, leaseMs: number): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      `UPDATE runs SET status = 'in_progress', started_at = now(), lease_owner = $2,
              lease_until = now() + ($3::integer * interval '1 millisecond')
        WHERE id = $1 AND status = 'queued' RETURNING *`,
      [id, leaseOwner, leaseMs],
    );
    return row;
  },

  /** Extends the lease while the run is executing; returns the status (another replica may have asked to cancel). */
  async renew(q: Queryable, id: string, leaseOwner: string, leaseMs: number): Promise<RunStatus | undefined> {
    const [row] = await q.query<{ status: RunStatus }>(
      `UPDATE runs SET lease_until = now() + ($3::integer * interval '1 millisecond')
        WHERE id = $1 AND lease_owner = $2 RETURNING status`,
      [id, leaseOwner, leaseMs],
    );
    return row?.status;
  },

  /**
   * Asks an open run to stop: in_progress → cancelling (the executor ends it as
   * cancelled); a run not yet started is cancelled at once. Undefined when not open.
   */
  async requestCancel(q: Queryable, id: string): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      `UPDATE runs SET
         status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE 'cancelling' END,
         cancelled_at = CASE WHEN status = 'queued' THEN now() ELSE cancelled_at END
        WHERE id = $1 AND status IN ('queued', 'in_progress') RETURNING *`,
      [id],
    );
    return row;
  },

  /**
   * Ends an open run once (a run already ended is left alone: undefined), with the `*_at`
   * time its status calls for. `onlyAbandoned`: only if its lease has run out (the sweep).
   */
  async finish(q: Queryable, id: string, ending: RunEnding, onlyAbandoned = false): Promise<RunRow | undefined> {
    const [row] = await q.query<RunRow>(
      `UPDATE runs SET status = $2, usage = COALESCE($3::jsonb, usage), last_error = $4::jsonb, incomplete_details = $5::jsonb,
              completed_at = CASE WHEN $2 IN ('completed', 'incomplete') THEN now() ELSE completed_at END,
              failed_at = CASE WHEN $2 = 'failed' THEN now() ELSE failed_at END,
              cancelled_at = CASE WHEN $2 = 'cancelled' THEN now() ELSE cancelled_at END,
              lease_owner = NULL, lease_until = NULL
        WHERE id = $1 AND status IN ('queued', 'in_progress', 'cancelling')
          AND (NOT $6::boolean OR lease_until IS NULL OR lease_until < now()) RETURNING *`,
      [id, ending.status, json(ending.usage), json(ending.lastError), json(ending.incompleteDetails), onlyAbandoned],
    );
    return row;
  },

  /**
   * Open runs nobody is executing any more: their lease ran out (the process died),
   * or, with `all`, every open run (the embedded database at start: nobody else can hold one).
   */
  async abandoned(q: Queryable, all: boolean): Promise<RunRow[]> {
    return q.query<RunRow>(
      `SELECT * FROM runs WHERE status IN ('queued', 'in_progress', 'cancelling')
          AND ($1::boolean OR lease_until IS NULL OR lease_until < now())
          AND ($1::boolean OR status <> 'queued' OR created_at < now() - interval '1 minute')
        ORDER BY id LIMIT 500`,
      [all],
    );
  },

  async appendEvents(q: Queryable, runId: string, firstSeq: number, events: { event: string; data: unknown }[]): Promise<void> {
    if (events.length === 0) return;
    await q.query(
      `INSERT INTO run_events (run_id, seq, event, data)
       SELECT $1, $2 + e.n - 1, e.v->>'event', e.v->'data'
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(v, n)`,
      [runId, firstSeq, JSON.stringify(events)],
    );
  },

  /** The run's stored events from `fromSeq` on, in order. */
  async events(q: Queryable, runId: string, fromSeq = 0): Promise<{ seq: number; event: string; data: unknown }[]> {
    return q.query('SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq', [runId, fromSeq]);
  },
};
