// How replicas coordinate: in-process without REDIS_URL (one process needs nothing
// more), over Redis with it. Redis carries only what is cheap to lose: cache
// invalidations (pub/sub) and throttling counters, under a namespace derived from
// the master secret, so deployments sharing one Redis never see each other's keys.
import { Redis, type RedisOptions } from 'ioredis';
import { LocalFailureCounter, type FailureCounter } from './failure-counter.js';
import { LocalInvalidationBus, type InvalidationBus } from './invalidation-bus.js';
import { RedisInvalidationBus } from './redis-bus.js';
import { RedisFailureCounter } from './redis-failure-counter.js';
import { LocalLimitStore, type LimitStore } from '../rate-limits/store.js';
import { RedisLimitStore } from '../rate-limits/redis-store.js';

export interface CoordinationStatus {
  kind: 'redis' | 'local';
  /** `degraded`: Redis is unreachable; this replica runs on its own (short caches, per-replica throttling). */
  status: 'ok' | 'degraded';
}

export interface Coordination {
  bus: InvalidationBus;
  failures: FailureCounter;
  /** Rate-limit and budget state (src/platform/rate-limits/): per replica while Redis is down. */
  limits: LimitStore;
  status(): CoordinationStatus;
  /** Where reconnects and errors are reported (buildApp points it at the server's logger; silent until then). */
  setLog(log: CoordinationLog): void;
  close(): Promise<void>;
}

export type CoordinationLog = (level: 'info' | 'warn', message: string) => void;

export function createCoordination(options: {
  redisUrl: string | undefined;
  /** A keyed hash from the master secret (Secrets.hash 'coordination'): names the namespace and hides throttle keys. */
  keyedHash: (value: string) => string;
  loginThrottleWindowSeconds: number;
}): Coordination {
  const { redisUrl, keyedHash } = options;
  let sink: CoordinationLog = () => {};
  const log: CoordinationLog = (level, message) => sink(level, message);
  const setLog = (next: CoordinationLog) => {
    sink = next;
  };
  if (!redisUrl) {
    const failures = new LocalFailureCounter(options.loginThrottleWindowSeconds);
    const limits = new LocalLimitStore();
    return {
      bus: new LocalInvalidationBus(),
      failures,
      limits,
      status: () => ({ kind: 'local', status: 'ok' }),
      setLog,
      close: async () => {
        failures.close();
        limits.close();
      },
    };
  }
  const namespace = `gw:${keyedHash('namespace').slice(0, 16)}:`;
  const publisher = new Redis(redisUrl, {
    ...connectionOptions,
    // Commands fail at once while disconnected: callers fall back instead of waiting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
  });
  const subscriber = new Redis(redisUrl, { ...connectionOptions, autoResubscribe: false });
  let lastError = '';
  const onError = (error: Error) => {
    // ioredis reports each failed reconnect; say it once per distinct error.
    if (error.message === lastError) return;
    lastError = error.message;
    log('warn', `coordination: Redis error: ${error.message}`);
  };
  publisher.on('error', onError);
  subscriber.on('error', onError);
  publisher.on('ready', () => {
    lastError = '';
  });
  const bus = new RedisInvalidationBus({ publisher, subscriber, channel: `${namespace}invalidations`, log });
  const failures = new RedisFailureCounter(
    publisher,
    options.loginThrottleWindowSeconds,
    (kind, key) => `${namespace}${kind}:${keyedHash(key)}`,
  );
  const limits = new RedisLimitStore(publisher, (key) => `${namespace}rl:${keyedHash(key)}`);
  return {
    bus,
    failures,
    limits,
    status: () => ({ kind: 'redis', status: bus.healthy() && publisher.status === 'ready' ? 'ok' : 'degraded' }),
    setLog,
    async close() {
      bus.close();
      failures.close();
      limits.close();
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

const connectionOptions: RedisOptions = {
  connectionName: 'gateway',
  connectTimeout: 2_000,
  keepAlive: 10_000,
  // Reconnect for ever, backing off to one try every 2 s: a replica comes back by itself.
  retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
  // After a failover (READONLY from a demoted primary) reconnect rather than keep failing.
  reconnectOnError: (error) => error.message.startsWith('READONLY'),
};
