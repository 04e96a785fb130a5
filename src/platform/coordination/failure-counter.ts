// Fixed-window failure counters for throttling (login, two-factor), the time of each
// key's last failure (for growing delays), and the attempts still in flight on each key. In-process by default; the interface is async so the
// Redis implementation (redis-failure-counter.ts) shares both across replicas.
// Counts are deliberately not durable: a restart forgets them.

export interface Reservation {
  /** Failures recorded for the key in the current window. */
  count: number;
  /** Attempts on the key in flight now, this one included. */
  inFlight: number;
  /** Seconds until the failure window resets (0 when there is none). */
  retryAfterSeconds: number;
  /** Milliseconds since the key's last failure in the window; undefined when there is none. */
  msSinceLastFailure: number | undefined;
  /** Ends this attempt (success or not); call it exactly once. */
  end(): void;
}

export interface FailureCounter {
  /** Failures recorded for `key` in the current window, and seconds until it resets. */
  peek(key: string): Promise<{ count: number; retryAfterSeconds: number }>;
  /**
   * Marks one attempt on `key` as in flight until its `end()`. The in-process counter
   * reserves before its first await, so callers that start together see each other.
   */
  begin(key: string): Promise<Reservation>;
  /** Records one failure; returns the new count. */
  fail(key: string): Promise<number>;
  reset(key: string): Promise<void>;
  close(): void | Promise<void>;
}

export class LocalFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number; lastFailureAt: number }>();
  private readonly inFlight = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  async peek(key: string) {
    const window = this.current(key);
    if (!window) return { count: 0, retryAfterSeconds: 0 };
    return { count: window.count, retryAfterSeconds: Math.max(1, Math.ceil((window.resetAt - this.now()) / 1000)) };
  }

  /** Synchronous but for the promise: the reservation is made when this is called. */
  begin(key: string): Promise<Reservation> {
    const inFlight = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, inFlight);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
    const lastFailureAt = this.current(key)?.lastFailureAt;
    return this.peek(key).then(({ count, retryAfterSeconds }) => ({
      count,
      inFlight: this.inFlight.get(key) ?? inFlight,
      retryAfterSeconds,
      msSinceLastFailure: lastFailureAt === undefined ? undefined : this.now() - lastFailureAt,
      end,
    }));
  }

  async fail(key: string): Promise<number> {
    let window = this.current(key);
    if (!window) {
      window = { count: 0, resetAt: this.now() + this.windowSeconds * 1000, lastFailureAt: 0 };
      this.windows.set(key, window);
    }
    window.lastFailureAt = this.now();
    return ++window.count;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private current(key: string) {
    const window = this.windows.get(key);
    if (window && window.resetAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
