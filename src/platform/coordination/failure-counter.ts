// Fixed-window failure counters for throttling (login, two-factor). In-process by
// default; the interface is async so a Redis implementation can share counts
// across replicas. Counts are deliberately not durable: a restart forgets them.

export interface FailureCounter {
  /** Failures recorded for `key` in the current window, and seconds until it resets. */
  peek(key: string): Promise<{ count: number; retryAfterSeconds: number }>;
  /** Records one failure; returns the new count. */
  fail(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

export class LocalFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
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

  async fail(key: string): Promise<number> {
    let window = this.current(key);
    if (!window) {
      window = { count: 0, resetAt: this.now() + this.windowSeconds * 1000 };
      this.windows.set(key, window);
    }
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
