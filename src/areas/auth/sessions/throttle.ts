// Throttling of credential guessing (passwords at login, second factors) on top of
// the shared FailureCounter. Two kinds of limit:
// - a hard one (`max`): at that many failures in the window, 429 until it ends. Used
//   per (account, address) and per address, so strangers elsewhere cannot keep the
//   owner out;
// - a growing delay (`backoff`) per account across all addresses: from `after`
//   failures on, each attempt waits 1 s, 2 s, 4 s … (capped) after the last failure.
//   It slows guessing spread over many addresses without a lock anyone can set.
// The counter only learns of a failure after the slow check (scrypt) has run, so
// without more, a burst of parallel guesses would all pass the "under the limit?"
// test before the first failure is recorded. Attempts still in flight therefore
// count too (FailureCounter.begin), which makes both kinds hold for concurrent
// requests: in this process, and across replicas when the counter is on Redis.
import type { FailureCounter, Reservation } from '../../../platform/coordination/failure-counter.js';
import { AppError } from '../../../platform/errors.js';

export type Limit = { key: string; max: number } | { key: string; backoff: { after: number; maxDelaySeconds: number } };

export interface Attempt {
  /** Records one failure on every key of the attempt. */
  fail(): Promise<void>;
  /** Forgets earlier failures on `key` (for example the account's at this address, after a success). */
  reset(key: string): Promise<void>;
  /** Ends the attempt; always call it, success or not. */
  end(): void;
}

/** The delay the `backoff` kind asks for after `failures` failures (`failures >= after`). */
export function backoffDelaySeconds(failures: number, backoff: { after: number; maxDelaySeconds: number }): number {
  return Math.min(backoff.maxDelaySeconds, 2 ** Math.min(failures - backoff.after, 30));
}

export class Throttle {
  constructor(
    private readonly failures: FailureCounter,
    private readonly detail: string,
  ) {}

  /** Starts an attempt, or throws 429 with Retry-After when any key is at its limit. */
  async begin(limits: Limit[]): Promise<Attempt> {
    // Every reservation is made before the first await, so concurrent callers see each other.
    const settled = await Promise.allSettled(limits.map(({ key }) => this.failures.begin(key)));
    const reservations = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      for (const reservation of reservations) reservation.end();
    };
    try {
      const rejected = settled.find((s) => s.status === 'rejected');
      if (rejected) throw rejected.reason;
      const retryAfterSeconds = Math.max(0, ...limits.map((limit, i) => secondsToWait(limit, reservations[i]!)));
      if (retryAfterSeconds > 0) throw new AppError('TOO_MANY_REQUESTS', this.detail, { retryAfterSeconds });
    } catch (error) {
      end();
      throw error;
    }
    return {
      fail: async () => {
        for (const { key } of limits) await this.failures.fail(key);
      },
      reset: (key) => this.failures.reset(key),
      end,
    };
  }
}

/** 0 when the attempt may go ahead under `limit`, else the whole seconds to wait (at least 1). */
function secondsToWait(limit: Limit, reservation: Reservation): number {
  const { count, inFlight, retryAfterSeconds: windowLeft, msSinceLastFailure } = reservation;
  // In-flight includes this attempt, so "count + others >= max" reads "count + inFlight > max".
  if ('max' in limit) return count + inFlight > limit.max ? Math.max(windowLeft, 1) : 0;
  // Every other attempt in flight may fail too: count them, and since one of them would
  // start a new delay when it does, wait for it rather than for the last recorded failure.
  const others = inFlight - 1;
  const failures = count + others;
  if (failures < limit.backoff.after) return 0;
  const sinceSeconds = others > 0 ? 0 : (msSinceLastFailure ?? Number.POSITIVE_INFINITY) / 1000;
  const wait = backoffDelaySeconds(failures, limit.backoff) - sinceSeconds;
  if (wait <= 0) return 0;
  // The count, and so the delay, goes when the window ends.
  return Math.max(1, Math.ceil(windowLeft > 0 ? Math.min(wait, windowLeft) : wait));
}
