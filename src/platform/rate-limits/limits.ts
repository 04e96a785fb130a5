// The limits a tenant admin sets on an API key and a platform admin on a tenant:
// requests and tokens per minute, token budgets per UTC day and month, and MCP tool
// calls per minute (checked by the MCP endpoint, not by model routes). One shape
// for both scopes; stored as jsonb (api_keys.limits, tenants.limits), carried to the
// request path by the cached key validation and the cached tenant settings.
import { Type, type Static } from '@fastify/type-provider-typebox';

/** Upper bounds: large enough for any real deployment, small enough to stay exact as doubles (Lua). */
export const LIMIT_BOUNDS = {
  requestsPerMinute: 1_000_000,
  tokensPerMinute: 1_000_000_000,
  tokensPerDay: 100_000_000_000,
  tokensPerMonth: 1_000_000_000_000,
  toolCallsPerMinute: 1_000_000,
} as const;

export type LimitName = keyof typeof LIMIT_BOUNDS;
export const LIMIT_NAMES = Object.keys(LIMIT_BOUNDS) as LimitName[];

const bounded = (name: LimitName) => Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: LIMIT_BOUNDS[name] }), Type.Null()]));

/** What a PATCH sends: each limit a positive integer, or null (none); the object replaces what was set. */
export const LimitsInput = Type.Object(
  {
    requestsPerMinute: bounded('requestsPerMinute'),
    tokensPerMinute: bounded('tokensPerMinute'),
    tokensPerDay: bounded('tokensPerDay'),
    tokensPerMonth: bounded('tokensPerMonth'),
    toolCallsPerMinute: bounded('toolCallsPerMinute'),
  },
  { additionalProperties: false },
);
export type LimitsInput = Static<typeof LimitsInput>;

/** The limits as records show them: only those that are set. */
export const LimitsRecord = Type.Object({
  requestsPerMinute: Type.Optional(Type.Integer()),
  tokensPerMinute: Type.Optional(Type.Integer()),
  tokensPerDay: Type.Optional(Type.Integer()),
  tokensPerMonth: Type.Optional(Type.Integer()),
  toolCallsPerMinute: Type.Optional(Type.Integer()),
});
export type Limits = Static<typeof LimitsRecord>;

/** The limits in a stored (or sent) object: positive integers only; anything else is no limit. */
export function limitsFrom(stored: unknown): Limits {
  const limits: Limits = {};
  if (!stored || typeof stored !== 'object') return limits;
  for (const name of LIMIT_NAMES) {
    const value = (stored as Record<string, unknown>)[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) limits[name] = value;
  }
  return limits;
}

/** The stored form: null when no limit is set (so the request path checks one property). */
export function storedLimits(input: LimitsInput | null): Limits | null {
  const limits = limitsFrom(input);
  return Object.keys(limits).length > 0 ? limits : null;
}
