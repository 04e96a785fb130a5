// Failure counters and in-flight attempts shared by every replica, on Redis: the
// fixed-window semantics of LocalFailureCounter, each step one Lua script, so a
// count and its expiry are set atomically and concurrent attempts on different
// replicas see each other.
//
// When Redis does not answer (down, or slower than the command timeout) each call
// falls back to an in-process counter, which also records every failure all along.
// Deliberately neither fail-closed (a Redis blip would lock everyone out of signing
// in) nor fail-open (unbounded guessing): while Redis is down the limits hold per
// replica, so a guesser gets at most `replicas × limit` tries per window.
import type { Redis } from 'ioredis';
import { LocalFailureCounter, type FailureCounter, type Reservation } from './failure-counter.js';

/** An attempt's in-flight mark outlives a replica that died mid-attempt by at most this. */
const IN_FLIGHT_TTL_MS = 30_000;

// Times are Redis's own clock (TIME), so replicas whose clocks differ agree on them.
const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
// KEYS[1] failures, KEYS[2] last failure's time; ARGV[1] window ms. A window starts with its first failure.
const FAIL = `local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
${NOW_MS}
redis.call('SET', KEYS[2], string.format('%d', now), 'PX', math.max(1, redis.call('PTTL', KEYS[1])))
return n`;
// KEYS[1] failures, KEYS[2] in flight, KEYS[3] last failure's time; ARGV[1] in-flight ttl ms.
// Returns {failures, in flight, window ms left, ms since the last failure or -1}.
const BEGIN = `local i = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
local last = redis.call('GET', KEYS[3])
local since = -1
if last then
  ${NOW_MS}
  since = math.max(0, now - tonumber(last))
end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), i, redis.call('PTTL', KEYS[1]), since}`;
// KEYS[1] in flight. Never below zero, even after the mark expired.
const END = `local i = redis.call('DECR', KEYS[1])
if i <= 0 then redis.call('DEL', KEYS[1]) end
return i`;
const PEEK = `return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}`;

type Scripted = Redis & {
  throttleFail(failures: string, lastFailure: string, windowMs: number): Promise<number>;
  throttleBegin(failures: string, inFlight: string, lastFailure: string, ttlMs: number): Promise<[number, number, number, number]>;
  throttleEnd(inFlight: string): Promise<number>;
  throttlePeek(failures: string): Promise<[number, number]>;
};

export class RedisFailureCounter implements FailureCounter {
  private readonly redis: Scripted;
  private readonly local: LocalFailureCounter;

  /** `keyOf`: the Redis key of a throttle key (namespaced, and hashed so no username or address is stored). */
  constructor(
    redis: Redis,
    private readonly windowSeconds: number,
    private readonly keyOf: (kind: 'f' | 'i' | 'l', key: string) => string,
    private readonly onError: (error: Error) => void = () => {},
  ) {
    redis.defineCommand('throttleFail', { numberOfKeys: 2, lua: FAIL });
    redis.defineCommand('throttleBegin', { numberOfKeys: 3, lua: BEGIN });
    redis.defineCommand('throttleEnd', { numberOfKeys: 1, lua: END });
    redis.defineCommand('throttlePeek', { numberOfKeys: 1, lua: PEEK });
    this.redis = redis as Scripted;
    this.local = new LocalFailureCounter(windowSeconds);
  }

  async peek(key: string) {
    try {
      const [count, ttlMs] = await this.redis.throttlePeek(this.keyOf('f', key));
      return { count, retryAfterSeconds: secondsLeft(count, ttlMs) };
    } catch (error) {
      this.onError(error as Error);
      return this.local.peek(key);
    }
  }

  async begin(key: string): Promise<Reservation> {
    const inFlightKey = this.keyOf('i', key);
    try {
      const [count, inFlight, ttlMs, sinceMs] = await this.redis.throttleBegin(
        this.keyOf('f', key),
        inFlightKey,
        this.keyOf('l', key),
        IN_FLIGHT_TTL_MS,
      );
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        // A lost decrement only keeps the mark until it expires: conservative, never lenient.
        this.redis.throttleEnd(inFlightKey).catch(() => {});
      };
      return {
        count,
        inFlight,
        retryAfterSeconds: secondsLeft(count, ttlMs),
        msSinceLastFailure: sinceMs >= 0 ? sinceMs : undefined,
        end,
      };
    } catch (error) {
      this.onError(error as Error);
      return this.local.begin(key);
    }
  }

  async fail(key: string): Promise<number> {
    const local = await this.local.fail(key);
    try {
      return await this.redis.throttleFail(this.keyOf('f', key), this.keyOf('l', key), this.windowSeconds * 1000);
    } catch (error) {
      this.onError(error as Error);
      return local;
    }
  }

  async reset(key: string): Promise<void> {
    await this.local.reset(key);
    try {
      await this.redis.del(this.keyOf('f', key), this.keyOf('l', key));
    } catch (error) {
      this.onError(error as Error);
    }
  }

  close(): void {
    this.local.close();
  }
}

function secondsLeft(count: number, ttlMs: number): number {
  return count > 0 && ttlMs > 0 ? Math.max(1, Math.ceil(ttlMs / 1000)) : 0;
}
