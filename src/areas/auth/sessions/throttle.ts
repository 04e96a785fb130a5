// Throttling of credential guessing (passwords at login, second factors at
// verify-2fa) on top of the shared FailureCounter. The counter only learns of a
// failure after the slow check (scrypt) has run, so without more, a burst of
// parallel guesses would all pass the "under the limit?" test before the first
// failure is recorded. Attempts still in flight therefore count against the
// limit too (FailureCounter.begin), which makes the limit hold for concurrent
// requests: in this process, and across replicas when the counter is on Redis.
import type { FailureCounter } from '../../../platform/coordination/failure-counter.js';
import { AppError } from '../../../platform/errors.js';

export interface Limit {
  key: string;
  max: number;
}

export interface Attempt {
  /** Records one failure on every key of the attempt. */
  fail(): Promise<void>;
  /** Forgets earlier failures on `key` (for example the account's, after a success). */
  reset(key: string): Promise<void>;
  /** Ends the attempt; always call it, success or not. */
  end(): void;
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
      let retryAfterSeconds = 0;
      limits.forEach(({ max }, i) => {
        const { count, inFlight, retryAfterSeconds: wait } = reservations[i]!;
        // In-flight includes this attempt, so "count + others >= max" reads "count + inFlight > max".
        if (count + inFlight > max) retryAfterSeconds = Math.max(retryAfterSeconds, wait, 1);
      });
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
