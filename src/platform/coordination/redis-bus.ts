// The invalidation bus across replicas, over Redis pub/sub. A change is delivered to
// this process synchronously first (as in-process), then published; every other
// replica's subscriber delivers it to its own handlers. A replica ignores its own
// messages (each bus has an origin id).
//
// Pub/sub is fire-and-forget: a subscriber that is disconnected misses messages for
// good. So the bus reports itself unhealthy from the moment its subscriber connection
// drops (or stops answering pings) until it is subscribed again, and caches shorten
// their lifetime meanwhile and start over on each change (InvalidationBus.onStatus).
// Messages this replica could not publish are kept (deduplicated) and sent once the
// command connection is back, so other replicas learn of them late rather than never.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LocalInvalidationBus, type Invalidation } from './invalidation-bus.js';

const KINDS = new Set<Invalidation['kind']>(['apiKey', 'user', 'tenant', 'computeNode', 'run', 'mcpCall']);
/** Unpublished messages kept while the command connection is down; more are dropped (the caches' TTL still bounds them). */
const MAX_PENDING = 10_000;

export interface RedisBusOptions {
  /** The command connection (publishes). */
  publisher: Redis;
  /** A connection of its own: once subscribed, a Redis connection can do nothing else. */
  subscriber: Redis;
  channel: string;
  /** How often the subscriber is pinged, so a silent network loss is noticed too. */
  pingIntervalMs?: number;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export class RedisInvalidationBus extends LocalInvalidationBus {
  readonly origin = randomUUID();
  private subscribed = false;
  private readonly statusListeners = new Set<(healthy: boolean) => void>();
  private readonly pending = new Map<string, Invalidation>();
  private readonly pinger: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: RedisBusOptions) {
    super();
    const { subscriber, publisher } = options;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === options.channel) this.receive(message);
    });
    subscriber.on('ready', () => void this.resubscribe());
    // 'close' comes once per lost connection; ioredis then reconnects with our backoff.
    subscriber.on('close', () => this.setSubscribed(false));
    publisher.on('ready', () => void this.flushPending());
    if (subscriber.status === 'ready') void this.resubscribe();
    const pingMs = options.pingIntervalMs ?? 2_000;
    this.pinger = setInterval(() => void this.ping(pingMs), pingMs).unref();
  }

  override async publish(event: Invalidation): Promise<void> {
    this.deliver(event); // here first, before the caller's response goes out
    await this.send(event);
  }

  override healthy(): boolean {
    return this.subscribed;
  }

  override onStatus(listener: (healthy: boolean) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pinger);
    this.statusListeners.clear();
  }

  private async send(event: Invalidation): Promise<void> {
    try {
      await this.options.publisher.publish(this.options.channel, JSON.stringify({ o: this.origin, e: event }));
    } catch {
      // The change is committed; failing the request would mislead. Sent on reconnect.
      if (this.pending.size < MAX_PENDING) this.pending.set(`${event.kind}:${event.id}`, event);
    }
  }

  private async flushPending(): Promise<void> {
    const events = [...this.pending.values()];
    this.pending.clear();
    for (const event of events) await this.send(event);
  }

  private receive(message: string): void {
    let parsed: { o?: unknown; e?: { kind?: unknown; id?: unknown } };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (parsed.o === this.origin) return;
    const event = parsed.e;
    if (!event || typeof event.id !== 'string' || !KINDS.has(event.kind as Invalidation['kind'])) return;
    this.deliver({ kind: event.kind as Invalidation['kind'], id: event.id });
  }

  // Healthy only once SUBSCRIBE is confirmed: the caches then start over, and any
  // message published after that point is received.
  private async resubscribe(): Promise<void> {
    try {
      await this.options.subscriber.subscribe(this.options.channel);
      this.setSubscribed(true);
    } catch {
      // The connection went again; its next 'ready' tries again.
    }
  }

  private async ping(timeoutMs: number): Promise<void> {
    if (!this.subscribed || this.closed) return;
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.options.subscriber.ping().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(resolve, timeoutMs, false);
      }),
    ]);
    clearTimeout(timer);
    if (answered || this.closed || !this.subscribed) return;
    this.options.log?.('warn', 'coordination: Redis subscriber stopped answering; reconnecting');
    this.setSubscribed(false);
    this.options.subscriber.disconnect(true);
  }

  private setSubscribed(value: boolean): void {
    if (this.subscribed === value || this.closed) return;
    this.subscribed = value;
    this.options.log?.(
      value ? 'info' : 'warn',
      value
        ? 'coordination: Redis bus connected; caches start over'
        : 'coordination: Redis bus disconnected; validation caches last a few seconds until it is back',
    );
    for (const listener of this.statusListeners) listener(value);
  }
}
