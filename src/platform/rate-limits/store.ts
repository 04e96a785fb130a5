// Where rate-limit state lives: in-process here, on Redis in redis-store.ts (the same
// rules as one Lua script per operation). Both take a list of meters and decide for
// all of them at once: a request is admitted only if every meter admits it, and a
// refused request changes none of them.
//
// Requests and tokens per minute are GCRA (the generic cell rate algorithm): one
// number per limit, the theoretical arrival time (TAT) of the next unit. A sliding
// log would keep one entry per request (a set growing with traffic, trimmed on every
// call); a fixed window lets 2N through across a window's edge. GCRA is exact, O(1)
// in time and space, and needs no trimming: it allows a burst of N, then one every
// 60 s / N. Tokens are known only when a request ends, so the tokens meter admits
// while its bucket is not in debt and is charged the actual tokens at the end.
//
// Token budgets per UTC day or month are a counter per period (`used`) plus the
// reservations of requests in flight. A request reserves its maximum and is admitted
// if used + reserved + its reservation ≤ budget, or if nothing else is reserved and
// used < budget; at its end the reservation is replaced by its actual tokens. So a
// budget is never overrun by more than one request's worth. Reservations of a
// replica that died expire after a bound.

export const MINUTE_MS = 60_000;

export type Meter =
  | { kind: 'requests'; key: string; limit: number }
  | { kind: 'tokens'; key: string; limit: number }
  /** `resetAt`: the end of the budget's period (epoch ms). */
  | { kind: 'budget'; key: string; limit: number; resetAt: number };

export interface MeterState {
  remaining: number;
  /** Until the meter is full again (GCRA) or its period ends (budget). */
  resetMs: number;
}

export interface Reservation {
  id: string;
  /** The tokens a budget holds for the request until it settles. */
  amount: number;
  /** When a reservation no one settled stops counting (its replica died). */
  expiresAt: number;
}

export type Admission =
  | { outcome: 'admitted'; states: MeterState[] }
  | { outcome: 'rejected'; index: number; retryAfterMs: number }
  /** These budgets' counters do not exist yet for their period: seed them (from the usage table) and try again. */
  | { outcome: 'unseeded'; indexes: number[] };

export interface LimitStore {
  admit(meters: readonly Meter[], reservation: Reservation, now: number): Promise<Admission>;
  /** The request ended with `tokens`: charge the tokens meters, replace the budgets' reservation by the tokens. */
  settle(meters: readonly Meter[], reservationId: string, tokens: number, now: number): Promise<void>;
  /** Starts a budget's counter at `used` unless it exists already. */
  seed(meter: Meter, used: number, now: number): Promise<void>;
  close(): void;
}

interface Budget {
  used: number;
  resetAt: number;
  reservations: Map<string, { amount: number; expiresAt: number }>;
}

/** The emission interval: milliseconds per unit. */
const interval = (limit: number) => MINUTE_MS / limit;

export class LocalLimitStore implements LimitStore {
  private readonly tats = new Map<string, number>();
  private readonly budgets = new Map<string, Budget>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(now()), MINUTE_MS).unref();
  }

  // Synchronous inside: in-process callers that start together are decided one by one.
  async admit(meters: readonly Meter[], reservation: Reservation, now: number): Promise<Admission> {
    const unseeded = meters.flatMap((m, i) => (m.kind === 'budget' && !this.budgets.has(m.key) ? [i] : []));
    if (unseeded.length > 0) return { outcome: 'unseeded', indexes: unseeded };
    for (let i = 0; i < meters.length; i++) {
      const retryAfterMs = this.refusal(meters[i]!, reservation, now);
      if (retryAfterMs > 0) return { outcome: 'rejected', index: i, retryAfterMs };
    }
    return { outcome: 'admitted', states: meters.map((m) => this.take(m, reservation, now)) };
  }

  async settle(meters: readonly Meter[], reservationId: string, tokens: number, now: number): Promise<void> {
    for (const m of meters) {
      if (m.kind === 'tokens') this.tats.set(m.key, Math.max(this.tats.get(m.key) ?? now, now) + tokens * interval(m.limit));
      if (m.kind === 'budget') {
        const budget = this.budgets.get(m.key);
        if (!budget) continue; // its period ended, or it was never seeded: the usage table has the tokens
        budget.reservations.delete(reservationId);
        budget.used += tokens;
      }
    }
  }

  async seed(meter: Meter, used: number): Promise<void> {
    if (meter.kind !== 'budget' || this.budgets.has(meter.key)) return;
    this.budgets.set(meter.key, { used, resetAt: meter.resetAt, reservations: new Map() });
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** 0 when `m` admits the request, else milliseconds until it might. */
  private refusal(m: Meter, reservation: Reservation, now: number): number {
    if (m.kind === 'budget') {
      const budget = this.budgets.get(m.key)!;
      const reserved = this.reserved(budget, now);
      if (budget.used + reserved + reservation.amount <= m.limit || (reserved === 0 && budget.used < m.limit)) return 0;
      // Spent: until the period ends. Held by requests in flight: they end soon.
      return budget.used >= m.limit ? Math.max(1, m.resetAt - now) : 1_000;
    }
    const tat = Math.max(this.tats.get(m.key) ?? now, now);
    if (m.kind === 'requests') return Math.max(0, tat + interval(m.limit) - now - MINUTE_MS);
    // Tokens: admitted while not in debt (the bucket holds at least one token).
    return tat - now < MINUTE_MS ? 0 : tat - now - MINUTE_MS + interval(m.limit);
  }

  private take(m: Meter, reservation: Reservation, now: number): MeterState {
    if (m.kind === 'budget') {
      const budget = this.budgets.get(m.key)!;
      budget.reservations.set(reservation.id, { amount: reservation.amount, expiresAt: reservation.expiresAt });
      return { remaining: Math.max(0, m.limit - budget.used - this.reserved(budget, now)), resetMs: m.resetAt - now };
    }
    const step = interval(m.limit);
    let tat = Math.max(this.tats.get(m.key) ?? now, now);
    if (m.kind === 'requests') {
      tat += step;
      this.tats.set(m.key, tat);
    }
    return { remaining: Math.max(0, Math.floor((MINUTE_MS - (tat - now)) / step)), resetMs: tat - now };
  }

  private reserved(budget: Budget, now: number): number {
    let sum = 0;
    for (const [id, r] of budget.reservations) {
      if (r.expiresAt <= now) budget.reservations.delete(id);
      else sum += r.amount;
    }
    return sum;
  }

  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat < now) this.tats.delete(key);
    for (const [key, budget] of this.budgets) if (budget.resetAt <= now) this.budgets.delete(key);
  }
}
