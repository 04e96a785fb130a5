// The limit store shared by every replica, on Redis: the rules of LocalLimitStore
// (store.ts), each operation one Lua script, so a check and its update are atomic
// across replicas (N per minute means N in total, not N per replica).
//
// Keys: a GCRA meter is a string (its TAT, epoch ms) expiring once the bucket is
// full again; a budget is a hash per period (`u`: tokens used, `r:<id>`: a
// reservation as "amount:expiresAt") expiring two days after its period ends.
//
// When Redis does not answer, each call falls back to an in-process store, as login
// throttling does: neither fail-closed (a Redis blip would stop every model call) nor
// fail-open (no limit at all). While Redis is down the limits hold per replica.
import type { Redis } from 'ioredis';
import { LocalLimitStore, MINUTE_MS, type Admission, type LimitStore, type Meter, type Reservation } from './store.js';

const KEEP_AFTER_PERIOD_MS = 2 * 24 * 3600_000;

// Shared by both scripts: the meters come as KEYS, and ARGV from 5 on as (kind, limit, resetAt) triples.
const COMMON = `local W = ${MINUTE_MS}
local now = tonumber(ARGV[1])
local function tatOf(key) return math.max(tonumber(redis.call('GET', key) or '0'), now) end
local function reserved(key)
  local fields = redis.call('HGETALL', key)
  local sum = 0
  for i = 1, #fields, 2 do
    local name = fields[i]
    if string.sub(name, 1, 2) == 'r:' then
      local sep = string.find(fields[i + 1], ':', 1, true)
      local amount = tonumber(string.sub(fields[i + 1], 1, sep - 1))
      if tonumber(string.sub(fields[i + 1], sep + 1)) <= now then redis.call('HDEL', key, name) else sum = sum + amount end
    end
  end
  return sum
end
`;

// ARGV: now, reservation id, amount, expiresAt, then the triples.
// Returns {0, states…} admitted (remaining, resetMs per meter), {1, index, retryAfterMs}, or {2, unseeded indexes…}.
const ADMIT = `${COMMON}
local id, amount, expiresAt = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local unseeded = {}
for i = 1, #KEYS do
  if ARGV[2 + 3 * i] == 'budget' and redis.call('HEXISTS', KEYS[i], 'u') == 0 then table.insert(unseeded, i - 1) end
end
if #unseeded > 0 then table.insert(unseeded, 1, 2) return unseeded end
for i = 1, #KEYS do
  local kind, limit, resetAt = ARGV[2 + 3 * i], tonumber(ARGV[3 + 3 * i]), tonumber(ARGV[4 + 3 * i])
  local wait = 0
  if kind == 'budget' then
    local used, held = tonumber(redis.call('HGET', KEYS[i], 'u')), reserved(KEYS[i])
    if not (used + held + amount <= limit or (held == 0 and used < limit)) then
      if used >= limit then wait = math.max(1, resetAt - now) else wait = 1000 end
    end
  else
    local tat, step = tatOf(KEYS[i]), W / limit
    if kind == 'requests' then wait = math.max(0, tat + step - now - W)
    elseif tat - now >= W then wait = tat - now - W + step end
  end
  if wait > 0 then return {1, i - 1, math.ceil(wait)} end
end
local out = {0}
for i = 1, #KEYS do
  local kind, limit, resetAt = ARGV[2 + 3 * i], tonumber(ARGV[3 + 3 * i]), tonumber(ARGV[4 + 3 * i])
  if kind == 'budget' then
    redis.call('HSET', KEYS[i], 'r:' .. id, amount .. ':' .. expiresAt)
    local left = limit - tonumber(redis.call('HGET', KEYS[i], 'u')) - reserved(KEYS[i])
    table.insert(out, math.max(0, left))
    table.insert(out, math.ceil(resetAt - now))
  else
    local tat, step = tatOf(KEYS[i]), W / limit
    if kind == 'requests' then
      tat = tat + step
      redis.call('SET', KEYS[i], string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
    end
    table.insert(out, math.max(0, math.floor((W - (tat - now)) / step)))
    table.insert(out, math.ceil(tat - now))
  end
end
return out`;

// ARGV: now, reservation id, tokens, (unused), then the triples (laid out as ADMIT's).
const SETTLE = `${COMMON}
local id, tokens = ARGV[2], tonumber(ARGV[3])
for i = 1, #KEYS do
  local kind, limit, resetAt = ARGV[2 + 3 * i], tonumber(ARGV[3 + 3 * i]), tonumber(ARGV[4 + 3 * i])
  if kind == 'tokens' then
    local tat = tatOf(KEYS[i]) + tokens * W / limit
    redis.call('SET', KEYS[i], string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
  elseif kind == 'budget' then
    redis.call('HDEL', KEYS[i], 'r:' .. id)
    if redis.call('HEXISTS', KEYS[i], 'u') == 1 then redis.call('HINCRBY', KEYS[i], 'u', tokens) end
  end
end
return 0`;

// KEYS[1] budget; ARGV: used, expire at (epoch ms).
const SEED = `if redis.call('HSETNX', KEYS[1], 'u', ARGV[1]) == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return 0`;

type Scripted = Redis & {
  limitsAdmit(...args: (string | number)[]): Promise<number[]>;
  limitsSettle(...args: (string | number)[]): Promise<number>;
  limitsSeed(key: string, used: number, expireAt: number): Promise<number>;
};

export class RedisLimitStore implements LimitStore {
  private readonly redis: Scripted;
  private readonly local = new LocalLimitStore();
  /** Admissions this replica made on its own while Redis was down: they settle here too. */
  private readonly localIds = new Set<string>();

  /** `keyOf`: the Redis key of a meter key (namespaced and hashed: no key or tenant id is stored). */
  constructor(
    redis: Redis,
    private readonly keyOf: (key: string) => string,
    private readonly onError: (error: Error) => void = () => {},
  ) {
    redis.defineCommand('limitsAdmit', { lua: ADMIT });
    redis.defineCommand('limitsSettle', { lua: SETTLE });
    redis.defineCommand('limitsSeed', { numberOfKeys: 1, lua: SEED });
    this.redis = redis as Scripted;
  }

  async admit(meters: readonly Meter[], reservation: Reservation, now: number): Promise<Admission> {
    let reply: number[];
    try {
      reply = await this.redis.limitsAdmit(
        ...this.args(meters),
        now,
        reservation.id,
        reservation.amount,
        reservation.expiresAt,
        ...triples(meters),
      );
    } catch (error) {
      this.onError(error as Error);
      const admission = await this.local.admit(meters, reservation, now);
      if (admission.outcome === 'admitted') this.localIds.add(reservation.id);
      return admission;
    }
    if (reply[0] === 2) return { outcome: 'unseeded', indexes: reply.slice(1) };
    if (reply[0] === 1) return { outcome: 'rejected', index: reply[1]!, retryAfterMs: reply[2]! };
    return { outcome: 'admitted', states: meters.map((_, i) => ({ remaining: reply[1 + 2 * i]!, resetMs: reply[2 + 2 * i]! })) };
  }

  async settle(meters: readonly Meter[], reservationId: string, tokens: number, now: number): Promise<void> {
    if (this.localIds.delete(reservationId)) return this.local.settle(meters, reservationId, tokens, now);
    try {
      await this.redis.limitsSettle(...this.args(meters), now, reservationId, tokens, 0, ...triples(meters));
    } catch (error) {
      // Lost: the reservation expires by itself; the tokens are in the usage table.
      this.onError(error as Error);
    }
  }

  async seed(meter: Meter, used: number, now: number): Promise<void> {
    await this.local.seed(meter, used);
    if (meter.kind !== 'budget') return;
    try {
      await this.redis.limitsSeed(this.keyOf(meter.key), used, Math.max(meter.resetAt, now) + KEEP_AFTER_PERIOD_MS);
    } catch (error) {
      this.onError(error as Error);
    }
  }

  close(): void {
    this.local.close();
  }

  private args(meters: readonly Meter[]): (string | number)[] {
    return [meters.length, ...meters.map((m) => this.keyOf(m.key))];
  }
}

const triples = (meters: readonly Meter[]) => meters.flatMap((m) => [m.kind, m.limit, m.kind === 'budget' ? m.resetAt : 0]);
