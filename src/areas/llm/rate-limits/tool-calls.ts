// MCP tool calls per minute (`toolCallsPerMinute`), beside a key's and a tenant's other
// limits: the key's applies to that key's calls, the tenant's to every call of the
// tenant (its keys and users). The same limit store as the model routes' limits
// (platform/rate-limits/), so on Redis one Lua script decides for all replicas: N a
// minute is N in total, however the calls are spread. A call is one unit of a GCRA
// meter, charged when admitted (whatever the call then does), never given back.
//
// Who asks: the MCP endpoint, for each `tools/call` before the SDK server sees it (so a
// refusal can be an HTTP 429 with Retry-After), and any other path that runs tools for
// a caller through `limitToolCalls` (a ToolSource that asks first).
import { randomUUID } from 'node:crypto';
import { AppError } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { Limits } from '../../../platform/rate-limits/limits.js';
import type { LimitStore, Meter } from '../../../platform/rate-limits/store.js';
import { headersOf, type LimitScope } from './limiter.js';

export interface ToolCallLimiterDeps {
  store: LimitStore;
  /** The tenant's limits from the cached tenant settings (null: none). */
  tenantLimits(tenantId: string): Limits | null | Promise<Limits | null>;
  now?: () => number;
}

export type ToolCallDecision =
  | { admitted: true; headers: Record<string, string> }
  | { admitted: false; headers: Record<string, string>; retryAfterSeconds: number; error: AppError };

const ADMITTED: ToolCallDecision = { admitted: true, headers: {} };

export class ToolCallLimiter {
  private readonly now: () => number;
  /** Told of every refusal, as RateLimiter.onRejected: ('key' | 'tenant', 'toolCallsPerMinute'). */
  onRejected: ((scope: LimitScope, limit: 'toolCallsPerMinute') => void) | undefined = undefined;

  constructor(private readonly deps: ToolCallLimiterDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Counts one tool call of `principal` against its key's and tenant's toolCallsPerMinute, or refuses it. */
  async admit(principal: Principal): Promise<ToolCallDecision> {
    const keyLimit = principal.kind === 'apiKey' ? principal.limits?.toolCallsPerMinute : undefined;
    const tenantLimits = await this.deps.tenantLimits(principal.tenantId);
    const tenantLimit = tenantLimits?.toolCallsPerMinute;
    if (keyLimit === undefined && tenantLimit === undefined) return ADMITTED;
    const named: { scope: LimitScope; meter: Meter }[] = [];
    // The limit is in the key, as the model routes' per-minute meters: a changed limit starts a fresh bucket.
    if (keyLimit !== undefined)
      named.push({ scope: 'key', meter: { kind: 'requests', key: `key:${principal.subject}:tcpm:${keyLimit}`, limit: keyLimit } });
    if (tenantLimit !== undefined)
      named.push({
        scope: 'tenant',
        meter: { kind: 'requests', key: `tenant:${principal.tenantId}:tcpm:${tenantLimit}`, limit: tenantLimit },
      });
    const meters = named.map((n) => n.meter);
    const now = this.now();
    // A GCRA meter holds no reservation: the store's reservation is a formality here.
    const result = await this.deps.store.admit(meters, { id: randomUUID(), amount: 0, expiresAt: now }, now);
    if (result.outcome === 'admitted') return { admitted: true, headers: headersOf(meters, result.states) };
    if (result.outcome === 'unseeded') throw new Error('tool call limits: a per-minute meter reported itself unseeded');
    const { scope, meter } = named[result.index]!;
    const retryAfterSeconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    this.onRejected?.(scope, 'toolCallsPerMinute');
    const error = new AppError(
      'TOO_MANY_REQUESTS',
      `Rate limit ${scope}.toolCallsPerMinute (${meter.limit} tool calls per minute) reached. Retry after ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    );
    return {
      admitted: false,
      headers: headersOf([meter], [{ remaining: 0, resetMs: result.retryAfterMs }]),
      retryAfterSeconds,
      error,
    };
  }
}
