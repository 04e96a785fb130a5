// The ingestion runner: a few workers (GATEWAY_INGEST_CONCURRENCY) that claim queued
// documents and process them, then fill in vectors for collections changing embedder.
// Uploads (and embedder changes) wake it at once; otherwise it looks when a retry
// comes due or a claimed document's lease runs out, and once a minute. Nothing here runs on behalf of a request: a
// slow PDF or a slow embedding node never holds an HTTP answer.
import type { Database } from '../../../platform/db/database.js';
import { AppError } from '../../../platform/errors.js';
import { isDataRefusal } from '../../../platform/db/database.js';
import type { DocumentsConfig } from '../../../platform/config.js';
import { ingestionJobs, type ClaimedDocument, type Stage } from './jobs.js';
import { DocumentGone, processDocument, type ProcessDeps } from './process-document.js';
import { reembedStep } from './reembed.js';
import { BatchWriter } from './batch-writer.js';

export type IngestionLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface IngestionDeps extends Omit<ProcessDeps, 'writer'> {
  db: Database;
  config: Pick<DocumentsConfig, 'ingestConcurrency' | 'ingestMaxAttempts'>;
  /** A worker renews its lease every third of this; a lease not renewed this long is taken as a dead worker's (GATEWAY_JOB_LEASE_SECONDS). */
  leaseSeconds?: number;
  log?: IngestionLog;
}

const DEFAULT_LEASE_SECONDS = 30;
// Documents in flight per extraction thread: while the database writes one batch, the
// next documents are extracted and embedded, and are then written together (batch-writer.ts).
const DOCUMENTS_PER_THREAD = 4;
const IDLE_POLL_MS = 60_000;
// Never poll faster than this, even when something is due (a retry, another worker's document).
const BUSY_POLL_MS = 1_000;
// Retries wait 5 s, 20 s, 80 s… so a node that is down for a minute does not fail a document.
const retryDelaySeconds = (attempt: number) => 5 * 4 ** (attempt - 1);

export class IngestionRunner {
  private running = false;
  private wakeUp: (() => void) | undefined;
  private readonly workers: Promise<void>[] = [];
  private readonly leaseSeconds: number;
  private readonly writer: BatchWriter;
  /**
   * The longest sleep with nothing due. On PostgreSQL an upload wakes only the replica
   * that took it, so another replica's idle workers look at least once a lease: a
   * document whose replica died is resumed within about two leases, not a minute.
   */
  private readonly idlePollMs: number;

  constructor(private readonly deps: IngestionDeps) {
    this.leaseSeconds = deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.writer = new BatchWriter(deps.db);
    this.idlePollMs = deps.db.kind === 'postgres' ? Math.min(IDLE_POLL_MS, this.leaseSeconds * 1000) : IDLE_POLL_MS;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.resume().finally(() => {
      for (let i = 0; i < this.deps.config.ingestConcurrency * DOCUMENTS_PER_THREAD; i++) this.workers.push(this.work());
    });
  }

  /**
   * On the embedded database this process is the only one (the data dir is locked),
   * so a document still `processing` was left by a run that crashed or was stopped:
   * it is resumed now instead of when its lease runs out. On PostgreSQL another
   * replica may own it; its lease decides.
   */
  private async resume(): Promise<void> {
    if (this.deps.db.kind !== 'embedded') return;
    const resumed = await ingestionJobs.releaseAll(this.deps.db).catch(() => 0);
    if (resumed > 0) this.deps.log?.('info', `ingestion: resuming ${resumed} document(s) left half-done by the last run`);
  }

  /** New work is there (an upload, an embedder change): idle workers look now. */
  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    wake?.();
  }

  /**
   * Stops claiming and gives work in flight a moment to finish. What does not finish
   * is not lost: its lease runs out and the next start (or another replica) resumes it.
   */
  async close(graceMs = 5000): Promise<void> {
    this.running = false;
    this.wake();
    await Promise.race([Promise.allSettled(this.workers), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  }

  private async work(): Promise<void> {
    while (this.running) {
      let didWork = false;
      try {
        const doc = await ingestionJobs.claim(this.deps.db, this.leaseSeconds);
        if (doc) {
          await this.run(doc);
          didWork = true;
        } else {
          didWork = await reembedStep({ ...this.deps, leaseSeconds: this.leaseSeconds });
        }
      } catch (error) {
        // The database is away (shutting down, a restart): wait and look again.
        if (this.running) this.deps.log?.('error', `ingestion: ${(error as Error).message}`);
      }
      if (!didWork && this.running) await this.idle(await this.untilDue());
    }
  }

  /**
   * How long to sleep: until the next retry comes due or a claimed document's lease
   * runs out (a dead worker's, maybe another replica's), at most idlePollMs. With
   * nothing pending at all the runner sleeps that long (or until an upload wakes it),
   * so an idle server does next to no database work.
   */
  private async untilDue(): Promise<number> {
    try {
      const [row] = await this.deps.db.query<{ ms: number | null }>(
        `SELECT EXTRACT(EPOCH FROM (min(CASE WHEN status = 'queued' THEN run_after ELSE lease_until END) - now())) * 1000 AS ms
         FROM documents WHERE status IN ('queued', 'processing')`,
      );
      return row?.ms === null || row?.ms === undefined ? this.idlePollMs : Math.min(this.idlePollMs, Math.max(BUSY_POLL_MS, row.ms));
    } catch {
      return BUSY_POLL_MS;
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      }, ms);
      timer.unref();
      const previous = this.wakeUp;
      const done = () => {
        clearTimeout(timer);
        previous?.();
        resolve();
      };
      this.wakeUp = done;
    });
  }

  private async run(doc: ClaimedDocument): Promise<void> {
    const { db, log } = this.deps;
    let gone = false;
    const renew = async (stage?: Stage) => {
      if (!(await ingestionJobs.renew(db, doc.id, doc.attempts, this.leaseSeconds, stage))) gone = true;
      if (gone) throw new DocumentGone();
    };
    const timer = setInterval(() => void renew().catch(() => {}), (this.leaseSeconds * 1000) / 3);
    timer.unref();
    try {
      const chunks = await processDocument({ ...this.deps, writer: this.writer }, doc, renew);
      log?.('info', `ingestion: ${doc.id} ready, ${chunks} chunks`);
    } catch (error) {
      if (error instanceof DocumentGone || gone) return;
      await this.failed(doc, error).catch((e: Error) => log?.('error', `ingestion: ${doc.id}: ${e.message}`));
    } finally {
      clearInterval(timer);
    }
  }

  private async failed(doc: ClaimedDocument, error: unknown): Promise<void> {
    const message = (error as Error).message || String(error);
    if (isPermanent(error)) {
      await ingestionJobs.markFailed(this.deps.db, doc.id, doc.attempts, message);
    } else if (doc.attempts >= this.deps.config.ingestMaxAttempts) {
      await ingestionJobs.markFailed(this.deps.db, doc.id, doc.attempts, `Gave up after ${doc.attempts} attempts: ${message}`);
    } else {
      await ingestionJobs.retryLater(
        this.deps.db,
        doc.id,
        doc.attempts,
        `Attempt ${doc.attempts} failed, will retry: ${message}`,
        retryDelaySeconds(doc.attempts),
      );
    }
    this.deps.log?.('warn', `ingestion: ${doc.id} attempt ${doc.attempts}: ${message}`);
  }
}

/**
 * A failure the same document would meet again: the file itself (an extraction error
 * marked permanent), a model the tenant cannot use, values the database refuses.
 * A node that is down, a timeout or a crash is worth another try.
 */
function isPermanent(error: unknown): boolean {
  if ((error as { permanent?: unknown })?.permanent === true) return true;
  if (error instanceof AppError) return error.status < 500;
  return isDataRefusal(error);
}
