// Records per-request model usage without a database write on the request path:
// entries queue in memory and go out in batched INSERTs every few seconds (or
// sooner when the queue fills). A failed write keeps what it did not store
// for the next timed flush, up to a bound, so a database blip loses nothing, a
// long outage cannot grow memory without limit, and nothing is stored twice.
// A row the database refuses for its values is found, dropped and counted, so it
// cannot hold back every row queued after it.
import { isDataRefusal, type Database } from '../../../platform/db/database.js';
import type { LlmObserver } from '../observer.js';
import type { Principal } from '../../../platform/identity.js';

export interface UsageEntry {
  tenantId: string;
  /** `user` or `apiKey`: a SCIM token never reaches a model route (the edge and guard.ts refuse it there). */
  principalKind: Principal['kind'];
  principalId: string;
  customerId?: string | undefined;
  /** e.g. `chat/completions`. */
  endpoint: string;
  model: string;
  nodeId: string | null;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  /** `ok`, `client_closed`, `engine_error`, `unavailable`… */
  status: string;
  correlationId?: string | undefined;
  at?: Date;
}

// One array parameter per column, unnested into rows: 14 parameters however many
// rows, where a multi-row VALUES list takes 14 per row and costs about 40% more
// CPU per row to build, parse and bind (measured on PGlite and PostgreSQL 15).
// The time goes as epoch milliseconds (a number: no object kept per entry, and no
// date text to format and parse per row).
//
// Each value is queued already written as an element of a Postgres array literal,
// and a flush only joins them into `{…}` texts. Left to `pg`, encoding the arrays
// at flush time was the largest single allocation per request (3.2 KB) and held the
// event loop for 2-5 ms per 1,000 rows. A text column keeps its last value's
// encoding, so a value repeated request after request (tenant, key, model) is
// written once and shared, not a new string per request.
const element = (value: string | null | undefined) => (value == null ? 'NULL' : `"${value.replace(/[\\"]/g, '\\$&')}"`);
function text(read: (e: UsageEntry) => string | null | undefined): (e: UsageEntry) => string {
  let last: string | null | undefined = null;
  let written = 'NULL';
  return (e) => {
    const value = read(e);
    if (value !== last) {
      last = value;
      written = element(value);
    }
    return written;
  };
}
const COLUMNS: readonly (readonly [name: string, type: string, write: (e: UsageEntry) => string])[] = [
  ['tenant_id', 'text', text((e) => e.tenantId)],
  ['principal_kind', 'text', text((e) => e.principalKind)],
  ['principal_id', 'text', text((e) => e.principalId)],
  ['customer_id', 'text', text((e) => e.customerId)],
  ['endpoint', 'text', text((e) => e.endpoint)],
  ['model', 'text', text((e) => e.model)],
  ['node_id', 'text', text((e) => e.nodeId)],
  ['stream', 'boolean', (e) => (e.stream ? 't' : 'f')],
  ['prompt_tokens', 'integer', (e) => String(e.promptTokens)],
  ['completion_tokens', 'integer', (e) => String(e.completionTokens)],
  ['latency_ms', 'integer', (e) => String(Math.round(e.latencyMs))],
  ['status', 'text', text((e) => e.status)],
  ['correlation_id', 'text', (e) => element(e.correlationId)],
  ['created_at', 'float8', (e) => String(e.at ? e.at.getTime() : Date.now())],
];
const INSERT =
  `INSERT INTO usage_records (${COLUMNS.map(([name]) => name).join(', ')}) ` +
  `SELECT ${COLUMNS.map(([name]) => (name === 'created_at' ? 'to_timestamp(created_at / 1000.0)' : name)).join(', ')} ` +
  `FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) AS u(${COLUMNS.map(([name]) => name).join(', ')})`;
/** Rows per statement, and the queue length that starts a flush before the timer: each statement costs ~1.5 ms on PGlite whatever its size. */
const FLUSH_AT = 1000;
const MAX_PENDING = 50_000;

/** Queued entries as one array of array-literal elements per column: a request adds strings to arrays, not an object that lives until the flush. */
class Columns {
  readonly values: string[][] = COLUMNS.map(() => []);

  get length(): number {
    return this.values[0]!.length;
  }

  add(entry: UsageEntry): void {
    for (let c = 0; c < COLUMNS.length; c++) this.values[c]!.push(COLUMNS[c]![2](entry));
  }

  /** Rows [from, to) as statement parameters: one array literal per column. */
  rows(from: number, to: number): string[] {
    return this.values.map((column) => `{${column.slice(from, to).join(',')}}`);
  }

  /** Keeps rows from `from` on, followed by `later`'s, at most the last `max`. */
  static rest(batch: Columns, from: number, later: Columns, max: number): Columns {
    const out = new Columns();
    for (let c = 0; c < COLUMNS.length; c++) out.values[c] = batch.values[c]!.slice(from).concat(later.values[c]!).slice(-max);
    return out;
  }

  /** Drops the oldest `count` rows. */
  dropOldest(count: number): void {
    for (const column of this.values) column.splice(0, count);
  }
}

export class UsageRecorder {
  private pending = new Columns();
  private flushing: Promise<void> | null = null;
  /** After a failed write only the timer retries: requests must not each start another attempt on a failing database. */
  private failing = false;
  private readonly timer: NodeJS.Timeout;
  /** Entries dropped because the database stayed unreachable while the queue was full. */
  dropped = 0;
  /** Entries dropped because the database refused their values (retrying them could never succeed). */
  refused = 0;

  /** `onError` hears of every failed write, as a sentence for the operator's log. */
  constructor(
    private readonly db: Database,
    flushSeconds: number,
    private readonly onError: (error: Error) => void = () => {},
  ) {
    this.timer = setInterval(() => void this.flush(), flushSeconds * 1000).unref();
  }

  /** Hears every entry's tokens (for /metrics); unset when metrics are off. */
  observer: Pick<LlmObserver, 'usage'> | undefined;
  /** Told of every entry as it is queued (the rate limiter settles the request's reservation). */
  onRecord: ((entry: UsageEntry) => void) | undefined = undefined;

  /** Queues the entry's values (the entry itself is not kept; `at` defaults to now). */
  record(entry: UsageEntry): void {
    this.observer?.usage(entry.model, entry.tenantId, entry.promptTokens, entry.completionTokens);
    this.onRecord?.(entry);
    if (this.pending.length >= MAX_PENDING) {
      // The database has been unreachable for a long while: make room in steps, not one row per request.
      const drop = Math.ceil(MAX_PENDING / 100);
      this.pending.dropOldest(drop);
      this.dropped += drop;
    }
    this.pending.add(entry);
    // One flush at a time: while one runs, later entries wait for the next (not a queue of flushes, one per request).
    if (this.pending.length >= FLUSH_AT && !this.flushing && !this.failing) void this.flush();
  }

  /** Writes everything queued so far; resolves when it is stored (or kept for a retry). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = new Columns();
    this.flushing = this.write(batch);
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** FLUSH_AT rows per statement; on a failure, the rows not stored yet go back to the front of the queue. */
  private async write(batch: Columns): Promise<void> {
    // Rows are stored in order, so what is stored is always the first `stored` rows.
    const progress = { stored: 0 };
    try {
      for (let from = 0; from < batch.length; from += FLUSH_AT)
        await this.insert(batch, from, Math.min(from + FLUSH_AT, batch.length), progress);
      this.failing = false;
    } catch (error) {
      const { stored } = progress;
      const kept = Columns.rest(batch, stored, this.pending, MAX_PENDING);
      // Rows that arrived while the write was in flight may push the queue past its bound: those cut are counted too.
      this.dropped += batch.length - stored + this.pending.length - kept.length;
      this.pending = kept;
      this.failing = true;
      this.onError(new Error(`usage records not written yet (kept for the next flush): ${(error as Error).message}`, { cause: error }));
    }
  }

  /**
   * Stores rows [from, to). When the database refuses the values of some row (a data
   * exception or a violated constraint), the range is halved until the refused rows
   * are found: those are dropped and counted, the others stored. Any other failure
   * (the database is down, a trigger said no) is thrown, and the rows wait for a retry.
   */
  private async insert(batch: Columns, from: number, to: number, progress: { stored: number }): Promise<void> {
    try {
      await this.db.query(INSERT, batch.rows(from, to));
    } catch (error) {
      if (!isDataRefusal(error)) throw error;
      if (to - from > 1) {
        const middle = (from + to) >>> 1;
        await this.insert(batch, from, middle, progress);
        await this.insert(batch, middle, to, progress);
        return;
      }
      this.refused++;
      this.onError(new Error(`a usage record was refused by the database and dropped: ${(error as Error).message}`, { cause: error }));
    }
    progress.stored = to;
  }
}
