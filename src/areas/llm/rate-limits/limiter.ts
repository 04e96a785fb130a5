// Rate limits and token budgets for requests that reach a model: an API key's
// (carried in its cached principal) and its tenant's (cached with the tenant's llm
// settings). Every check and update runs in the limit store (platform/rate-limits/),
// in one step for all meters: on Redis one Lua script, so replicas share them.
//
// A request is admitted before it reaches an engine and holds a ticket until it
// ends; its usage record (the one place every model call reports its tokens, with
// the request's correlation id) settles the ticket: the tokens-per-minute meters are
// charged the actual tokens and the budgets' reservation is replaced by them.
import { randomUUID } from 'node:crypto';
import { AppError } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { LimitName, Limits } from '../../../platform/rate-limits/limits.js';
import type { LimitStore, Meter, MeterState } from '../../../platform/rate-limits/store.js';

export type LimitScope = 'key' | 'tenant';

/** A reservation nobody settled (its replica died, or the request never reported usage) stops counting after this. */
export const RESERVATION_TTL_MS = 15 * 60_000;

export interface RateLimiterDeps {
  store: LimitStore;
  /**
   * Tokens a key or tenant used in [from, to) according to the usage table, after
   * this process's queued records are written: seeds a budget's counter the first
   * time a period is used, so a restart or a Redis flush never resets a month's spend.
   */
  usedTokens(tenantId: string, keyId: string | null, from: Date, to: Date): Promise<number>;
  now?: () => number;
}

export interface Ticket {
  readonly reservationId: string;
  readonly meters: readonly Meter[];
  readonly correlationId: string;
  readonly startedAt: number;
  settled: boolean;
}

export type Decision =
  | { admitted: true; headers: Record<string, string>; ticket: Ticket }
  | { admitted: false; headers: Record<string, string>; error: AppError };

const DAY_MS = 86_400_000;

export class RateLimiter {
  /** Tickets by correlation id (a client may reuse one: a list, settled oldest first). */
  private readonly pending = new Map<string, Ticket[]>();
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;
  /**
   * Told of every refusal, e.g. ('key', 'requestsPerMinute'): the hook a metrics
   * counter of rate-limit rejections attaches to (set it after start; nothing here uses it).
   */
  onRejected: ((scope: LimitScope, limit: LimitName) => void) | undefined = undefined;

  constructor(private readonly deps: RateLimiterDeps) {
    this.now = deps.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  /** Whether anything limits this caller: the one check a request without limits pays (with the tenant lookup the router caches). */
  static applies(principal: Principal, tenantLimits: Limits | null): boolean {
    return principal.limits !== undefined || tenantLimits !== null;
  }

  /** `reservation`: the most tokens the request can use (prompt estimate + its max tokens). */
  async admit(principal: Principal, tenantLimits: Limits | null, reservation: number, correlationId: string): Promise<Decision> {
    const named: { name: string; meter: Meter }[] = [];
    const now = this.now();
    if (principal.limits && principal.kind === 'apiKey') named.push(...meters('key', principal.subject, principal.limits, now));
    if (tenantLimits) named.push(...meters('tenant', principal.tenantId, tenantLimits, now));
    const list = named.map((n) => n.meter);
    const reservationId = randomUUID();
    // Only limits model routes do not meter (toolCallsPerMinute): nothing to ask the store.
    if (list.length === 0)
      return { admitted: true, headers: {}, ticket: { reservationId, meters: list, correlationId, startedAt: now, settled: true } };
    for (let attempt = 0; ; attempt++) {
      const result = await this.deps.store.admit(
        list,
        { id: reservationId, amount: reservation, expiresAt: now + RESERVATION_TTL_MS },
        now,
      );
      if (result.outcome === 'unseeded' && attempt < 3) {
        await Promise.all(result.indexes.map((i) => this.seed(named[i]!.name, list[i]!, principal, now)));
        continue;
      }
      if (result.outcome === 'admitted') {
        const ticket: Ticket = { reservationId, meters: list, correlationId, startedAt: now, settled: false };
        const tickets = this.pending.get(correlationId);
        if (tickets) tickets.push(ticket);
        else this.pending.set(correlationId, [ticket]);
        return { admitted: true, headers: headersOf(list, result.states), ticket };
      }
      if (result.outcome === 'unseeded') throw new Error('rate limits: a budget could not be seeded');
      const { name } = named[result.index]!;
      const meter = list[result.index]!;
      const retryAfterSeconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      const [scope, limit] = name.split('.') as [LimitScope, LimitName];
      this.onRejected?.(scope, limit);
      const headers = headersOf([meter], [{ remaining: 0, resetMs: result.retryAfterMs }]);
      const error = new AppError(
        'TOO_MANY_REQUESTS',
        `Rate limit ${name} (${meter.limit} ${UNITS[limit]}) reached. Retry after ${retryAfterSeconds} s.`,
        { retryAfterSeconds },
      );
      return { admitted: false, headers, error };
    }
  }

  /** A usage record: settles the oldest open ticket of its request with the actual tokens. */
  recorded(correlationId: string | undefined, tokens: number): void {
    if (correlationId === undefined || this.pending.size === 0) return;
    const tickets = this.pending.get(correlationId);
    const ticket = tickets?.shift();
    if (!ticket) return;
    if (tickets!.length === 0) this.pending.delete(correlationId);
    this.settle(ticket, tokens);
  }

  /** The request ended without reaching an engine (refused, not found…): nothing is charged. */
  release(ticket: Ticket): void {
    if (ticket.settled) return;
    const tickets = this.pending.get(ticket.correlationId);
    if (tickets) {
      const at = tickets.indexOf(ticket);
      if (at >= 0) tickets.splice(at, 1);
      if (tickets.length === 0) this.pending.delete(ticket.correlationId);
    }
    this.settle(ticket, 0);
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private settle(ticket: Ticket, tokens: number): void {
    ticket.settled = true;
    void this.deps.store.settle(ticket.meters, ticket.reservationId, tokens, this.now()).catch(() => {});
  }

  private seed(name: string, meter: Meter, principal: Principal, now: number): Promise<void> {
    let running = this.seeding.get(meter.key);
    if (!running) {
      const [scope, limit] = name.split('.') as [LimitScope, LimitName];
      const [from, to] = period(limit, now);
      running = this.deps
        .usedTokens(principal.tenantId, scope === 'key' ? principal.subject : null, from, to)
        .then((used) => this.deps.store.seed(meter, used, now))
        .finally(() => this.seeding.delete(meter.key));
      this.seeding.set(meter.key, running);
    }
    return running;
  }

  /** Tickets whose request never reported usage: their reservations have expired in the store by now. */
  private sweep(): void {
    const cutoff = this.now() - RESERVATION_TTL_MS;
    for (const [id, tickets] of this.pending) {
      const open = tickets.filter((t) => t.startedAt > cutoff);
      if (open.length === 0) this.pending.delete(id);
      else if (open.length < tickets.length) this.pending.set(id, open);
    }
  }
}

const UNITS: Record<LimitName, string> = {
  requestsPerMinute: 'requests per minute',
  tokensPerMinute: 'tokens per minute',
  tokensPerDay: 'tokens per UTC day',
  tokensPerMonth: 'tokens per UTC month',
  toolCallsPerMinute: 'tool calls per minute',
};

/** The UTC day or month `now` falls in, as [start, end). */
function period(limit: LimitName, now: number): [Date, Date] {
  const d = new Date(now);
  if (limit === 'tokensPerMonth')
    return [new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)), new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))];
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return [new Date(start), new Date(start + DAY_MS)];
}

/** The meters of one scope's limits, each named `scope.limit` for the 429 and the rejection hook. */
function meters(scope: LimitScope, id: string, limits: Limits, now: number): { name: string; meter: Meter }[] {
  const out: { name: string; meter: Meter }[] = [];
  const base = `${scope}:${id}`;
  // The per-minute meters carry their limit in the key: a changed limit starts a fresh bucket
  // (a TAT built at 3 a minute would hold a limit raised to 1,000 back for up to a minute).
  if (limits.requestsPerMinute)
    out.push({
      name: `${scope}.requestsPerMinute`,
      meter: { kind: 'requests', key: `${base}:rpm:${limits.requestsPerMinute}`, limit: limits.requestsPerMinute },
    });
  if (limits.tokensPerMinute)
    out.push({
      name: `${scope}.tokensPerMinute`,
      meter: { kind: 'tokens', key: `${base}:tpm:${limits.tokensPerMinute}`, limit: limits.tokensPerMinute },
    });
  for (const limit of ['tokensPerDay', 'tokensPerMonth'] as const) {
    const budget = limits[limit];
    if (!budget) continue;
    const [from, to] = period(limit, now);
    // The period is in the key: a new day or month starts a new counter (seeded from the usage table).
    const label = from.toISOString().slice(0, limit === 'tokensPerDay' ? 10 : 7);
    out.push({ name: `${scope}.${limit}`, meter: { kind: 'budget', key: `${base}:${label}`, limit: budget, resetAt: to.getTime() } });
  }
  return out;
}

/** X-RateLimit-* for requests and for tokens: of each kind, the meter with the least left. */
export function headersOf(list: readonly Meter[], states: readonly MeterState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const tightest = (requests: boolean) => {
    let best = -1;
    for (let i = 0; i < list.length; i++)
      if ((list[i]!.kind === 'requests') === requests && (best < 0 || states[i]!.remaining < states[best]!.remaining)) best = i;
    return best;
  };
  const put = (i: number, suffix: string) => {
    if (i < 0) return;
    headers[`x-ratelimit-limit${suffix}`] = String(list[i]!.limit);
    headers[`x-ratelimit-remaining${suffix}`] = String(states[i]!.remaining);
    headers[`x-ratelimit-reset${suffix}`] = String(Math.max(0, Math.ceil(states[i]!.resetMs / 1000)));
  };
  put(tightest(true), '');
  put(tightest(false), '-tokens');
  return headers;
}
