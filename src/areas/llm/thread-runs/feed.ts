// A thread run's stream events while it executes in this process: one in-memory log
// per run that every HTTP reader of the run follows with a cursor of its own, and
// that is stored in run_events as it grows, so a reader who comes back later (or on
// another replica) reads the same events from the database.
//
// The run never waits on a reader: emit() appends and wakes the readers, nothing
// more. A reader whose socket is full simply falls behind in the log and catches up
// when it drains (stream.ts); what it can fall behind by is bounded by the run's own
// answer (max_tokens), which the log holds anyway. Text pieces are one
// thread.message.delta each in memory (a live reader gets them as the engine made
// them) and joined into one stored event per save.
import type { Database } from '../../../platform/db/database.js';
import { runRepository } from '../runs/repository.js';
import { DELTA, deltaOf, type MessageDelta, type RunEvent } from './events.js';

export interface FeedDeps {
  db: Database;
  /** Where a failed save is reported (the run goes on; a later save retries). */
  logError(error: unknown, message: string): void;
  /** How often the text pieces of a growing answer are saved (lifecycle events are saved at once). */
  saveMs?: number;
}

const DEFAULT_SAVE_MS = 500;
const FOREIGN_KEY_VIOLATION = '23503';

export class RunFeed {
  /** Every event so far, in order. */
  readonly events: RunEvent[] = [];
  private ended = false;
  private waiters: (() => void)[] = [];
  /** Rows in run_events, and how many entries of `events` they hold. */
  private storedRows = 0;
  private storedEvents = 0;
  private saving: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;

  constructor(
    readonly runId: string,
    private readonly deps: FeedDeps,
    private readonly onClosed: () => void,
  ) {}

  /** Whether the run's last event is in (readers finish once they have read it all). */
  get done(): boolean {
    return this.ended;
  }

  emit(event: RunEvent['event'], data: unknown): void {
    if (this.ended) return;
    this.events.push({ event, data } as RunEvent);
    this.wake();
    this.saveIn(event === DELTA ? (this.deps.saveMs ?? DEFAULT_SAVE_MS) : 0);
  }

  /** The run is over: what is left is stored, then the feed leaves the registry. Never rejects. */
  async end(): Promise<void> {
    if (this.ended) return this.saving;
    this.ended = true;
    this.wake();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.save();
    this.onClosed();
  }

  /** Resolves when an event is added, the feed ends, or `signal` aborts. */
  changed(signal?: AbortSignal): Promise<void> {
    if (this.ended || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Saves within `ms` (sooner if a save is already due sooner); one timer at a time. */
  private saveIn(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerDue = Number.POSITIVE_INFINITY;
      void this.save();
    }, ms);
    this.timer.unref();
  }

  /** One write at a time, in order: each takes what is new since the last. */
  private save(): Promise<void> {
    this.saving = this.saving.then(() => this.write());
    return this.saving;
  }

  private async write(): Promise<void> {
    const upTo = this.events.length;
    if (upTo === this.storedEvents) return;
    const rows = joinDeltas(this.events.slice(this.storedEvents, upTo));
    try {
      await runRepository.appendEvents(this.deps.db, this.runId, this.storedRows, rows);
      this.storedRows += rows.length;
      this.storedEvents = upTo;
    } catch (error) {
      // The thread was deleted (its runs with it): nothing left to store them for.
      if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) this.storedEvents = this.events.length;
      // Otherwise left for the next save (the run's own rows are written by the executor regardless).
      else this.deps.logError(error, 'could not store the stream events of a thread run');
    }
  }
}

/** Consecutive text pieces of one message as one event. */
export function joinDeltas(events: RunEvent[]): RunEvent[] {
  const joined: RunEvent[] = [];
  for (const e of events) {
    const last = joined.at(-1);
    if (e.event === DELTA && last?.event === DELTA && last.data.id === e.data.id) {
      joined[joined.length - 1] = { event: DELTA, data: deltaOf(e.data.id, textOf(last.data) + textOf(e.data)) };
    } else joined.push(e);
  }
  return joined;
}

const textOf = (delta: MessageDelta) => delta.delta.content[0]?.text.value ?? '';

/** The feeds of the runs executing in this process (by run id). */
export class RunFeeds {
  private readonly feeds = new Map<string, RunFeed>();

  constructor(private readonly deps: FeedDeps) {}

  open(runId: string): RunFeed {
    const feed = new RunFeed(runId, this.deps, () => {
      if (this.feeds.get(runId) === feed) this.feeds.delete(runId);
    });
    this.feeds.set(runId, feed);
    return feed;
  }

  get(runId: string): RunFeed | undefined {
    return this.feeds.get(runId);
  }
}
