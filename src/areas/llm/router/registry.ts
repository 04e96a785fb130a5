// The compute nodes this process routes to, and their health. Config nodes (and
// the built-in local engine) are fixed at start; API nodes are loaded from the
// database at start and again whenever the bus says one changed. A health loop
// refreshes every node's model list; a node cooled down after repeated failures
// is probed again when its cooldown ends and only a successful probe readmits it.
import type { Engine } from '../../../engines/types.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { NodeRuntime, type NodeDefinition } from './node-runtime.js';

export interface RegistryOptions {
  staticNodes: NodeDefinition[];
  loadApiNodes: () => Promise<NodeDefinition[]>;
  createEngine: (definition: NodeDefinition) => Engine;
  /** Re-checks an API node's URL (DNS may have changed) before each probe; throws to fail the probe. */
  checkUrl?: (definition: NodeDefinition) => Promise<void>;
  bus: InvalidationBus;
  healthIntervalMs: number;
  probeTimeoutMs: number;
  failuresBeforeCooldown: number;
  cooldownMs: number;
  log: LlmLog;
}

/** The least time between two confirmation probes of one node that requests cause. */
const CONFIRM_SPACING_MS = 2000;

/** Where the llm area reports node health changes and background failures (the server's logger, once the app is built). */
export type LlmLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export class NodeRegistry {
  private list: NodeRuntime[] = [];
  private readonly byId = new Map<string, NodeRuntime>();
  private readonly closing = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private reloading: Promise<void> = Promise.resolve();
  private queuedReload: Promise<void> | null = null;
  private needsReload = false;
  private readyFlag = false;
  /** Settles when the first load and the first probe of every node have finished (each probe bounded). */
  readonly ready: Promise<void>;

  constructor(private readonly options: RegistryOptions) {
    this.list = options.staticNodes.map((definition) => this.add(definition));
    this.unsubscribe = options.bus.subscribe((event) => {
      if (event.kind !== 'computeNode') return;
      // Synchronous, so a deleted or disabled node takes no new request from here
      // on, even before the reload below has read the database.
      const node = this.byId.get(event.id);
      if (node) node.stale = true;
      this.needsReload = true;
      void this.reload();
    });
    // Messages may have been missed while the bus was down (Redis): reload when it comes back.
    const unsubscribeStatus = options.bus.onStatus(() => {
      this.needsReload = true;
      void this.reload();
    });
    const unsubscribeEvents = this.unsubscribe;
    this.unsubscribe = () => {
      unsubscribeEvents();
      unsubscribeStatus();
    };
    // Not awaited by start-up: the server listens while the first probes run.
    this.ready = Promise.all([this.reload(), ...this.list.map((node) => this.probe(node))]).then(() => {
      this.readyFlag = true;
    });
    this.timer = setInterval(() => this.tick(), options.healthIntervalMs).unref();
  }

  /** Resolves at once after start-up; early requests wait for the first probes instead of seeing no models. */
  whenReady(): Promise<void> | undefined {
    return this.readyFlag ? undefined : this.ready;
  }

  /** Current nodes (config first, then API nodes by id); retired nodes are not listed. */
  nodes(): readonly NodeRuntime[] {
    return this.list;
  }

  get(id: string): NodeRuntime | undefined {
    return this.byId.get(id);
  }

  /** Re-reads the API nodes; concurrent callers share a reload that starts after their change. Never rejects. */
  reload(): Promise<void> {
    if (this.queuedReload) return this.queuedReload;
    const next = this.reloading.then(async () => {
      this.queuedReload = null;
      await this.loadApiNodes();
    });
    this.queuedReload = next;
    this.reloading = next;
    return next;
  }

  /** Probes one node (or all) now; resolves when the probe finished. */
  async refresh(id?: string): Promise<void> {
    const targets = id === undefined ? this.list : this.list.filter((node) => node.definition.id === id);
    await Promise.all(targets.map((node) => this.probe(node)));
  }

  /**
   * A request found `node` without a model its list names: probe the node's listing
   * (the truth, which is all that may change a list every tenant of the node shares),
   * unless a probe is running or one finished within CONFIRM_SPACING_MS. So requests,
   * whoever sends them, cause at most one listing per node per interval.
   */
  confirmModels(node: NodeRuntime): void {
    if (node.probing || node.status !== 'healthy' || node.retired || this.closing.signal.aborted) return;
    if (node.checkedAt !== null && Date.now() - node.checkedAt.getTime() < CONFIRM_SPACING_MS) return;
    void this.probe(node);
  }

  recordSuccess(node: NodeRuntime): void {
    node.consecutiveFailures = 0;
  }

  recordFailure(node: NodeRuntime, reason: string): void {
    node.consecutiveFailures++;
    node.lastError = reason;
    if (node.consecutiveFailures >= this.options.failuresBeforeCooldown && node.status !== 'cooldown' && !node.retired) {
      this.options.log(
        'warn',
        `compute node ${node.definition.name} (${node.definition.id}) cooled down for ${this.options.cooldownMs / 1000} s after ${node.consecutiveFailures} consecutive failures`,
      );
      this.startCooldown(node);
    }
  }

  /** A lease on `node` ended: a retired node closes once its last request is done. */
  released(node: NodeRuntime): void {
    if (node.retired && node.outstanding === 0) void this.closeEngine(node);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.unsubscribe();
    this.closing.abort();
    const all = [...this.list];
    this.list = [];
    this.byId.clear();
    await Promise.all(all.map((node) => this.closeEngine(node)));
  }

  private tick(): void {
    // While the bus is down, changes made on other replicas arrive only by re-reading.
    if (this.needsReload || !this.options.bus.healthy()) void this.reload();
    const now = Date.now();
    for (const node of this.list) {
      if (node.status === 'cooldown' && now < node.cooldownUntil) continue;
      void this.probe(node);
    }
  }

  private probe(node: NodeRuntime): Promise<void> {
    if (!node.probing) node.probing = this.runProbe(node).finally(() => (node.probing = null));
    return node.probing;
  }

  private async runProbe(node: NodeRuntime): Promise<void> {
    if (!node.definition.enabled || node.retired || this.closing.signal.aborted) return;
    const startedAt = Date.now();
    const signal = AbortSignal.any([AbortSignal.timeout(this.options.probeTimeoutMs), this.closing.signal]);
    try {
      if (this.options.checkUrl && node.definition.source === 'api') await this.options.checkUrl(node.definition);
      const models = await node.engine.listModels(signal);
      if (node.retired || this.closing.signal.aborted) return;
      node.recordModels(models, new Date());
      node.checkedAt = new Date();
      node.lastError = undefined;
      // A probe that began before the cooldown says nothing about the node since.
      if (node.status === 'cooldown' && startedAt < node.cooldownUntil - this.options.cooldownMs) return;
      if (node.status === 'healthy') return;
      // Readmitted with a clean slate. A routine probe of a healthy node leaves the
      // failure count alone: a node that lists models but fails every chat must still cool down.
      if (node.status !== 'unknown' && node.status !== 'disabled')
        this.options.log(
          'info',
          `compute node ${node.definition.name} (${node.definition.id}) is back, healthy with ${models.length} model(s)`,
        );
      this.clearCooldown(node);
      node.status = 'healthy';
      node.consecutiveFailures = 0;
    } catch (error) {
      if (node.retired || this.closing.signal.aborted) return;
      node.checkedAt = new Date();
      node.lastError = describe(error, signal);
      if (node.status === 'cooldown') {
        this.startCooldown(node); // still failing: another full cooldown before the next probe
      } else if (node.status !== 'unhealthy') {
        this.options.log('warn', `compute node ${node.definition.name} (${node.definition.id}) is unhealthy: ${node.lastError}`);
        node.status = 'unhealthy';
      }
    }
  }

  private startCooldown(node: NodeRuntime): void {
    this.clearCooldown(node);
    node.status = 'cooldown';
    node.cooldownUntil = Date.now() + this.options.cooldownMs;
    node.cooldownTimer = setTimeout(() => {
      node.cooldownTimer = null;
      void this.probe(node);
    }, this.options.cooldownMs).unref();
  }

  private clearCooldown(node: NodeRuntime): void {
    if (node.cooldownTimer) clearTimeout(node.cooldownTimer);
    node.cooldownTimer = null;
    node.cooldownUntil = 0;
  }

  private add(definition: NodeDefinition): NodeRuntime {
    const node = new NodeRuntime(definition, this.options.createEngine(definition));
    this.byId.set(definition.id, node);
    return node;
  }

  private async loadApiNodes(): Promise<void> {
    let definitions: NodeDefinition[];
    try {
      definitions = await this.options.loadApiNodes();
    } catch (error) {
      this.needsReload = true; // the health loop tries again
      this.options.log('error', `compute nodes could not be loaded: ${(error as Error).message}`);
      return;
    }
    if (this.closing.signal.aborted) return;
    this.needsReload = false;
    const fixed = this.list.filter((node) => node.definition.source === 'config');
    const wanted = new Set(definitions.map((d) => d.id));
    for (const node of this.list) if (node.definition.source === 'api' && !wanted.has(node.definition.id)) this.retire(node);
    const toProbe: NodeRuntime[] = [];
    const api: NodeRuntime[] = [];
    for (const definition of definitions) {
      const current = this.byId.get(definition.id);
      if (current && !current.needsNewEngine(definition)) {
        const wasEnabled = current.definition.enabled;
        current.update(definition);
        current.stale = false;
        if (definition.enabled && !wasEnabled) toProbe.push(current);
        api.push(current);
        continue;
      }
      if (current) this.retire(current);
      try {
        const created = this.add(definition);
        toProbe.push(created);
        api.push(created);
      } catch (error) {
        // One node the adapter refuses (say, a URL it cannot use) must not keep the others out.
        this.options.log('error', `compute node ${definition.id} left out: ${(error as Error).message}`);
      }
    }
    this.list = [...fixed, ...api];
    await Promise.all(toProbe.map((node) => this.probe(node)));
  }

  private retire(node: NodeRuntime): void {
    node.retired = true;
    this.clearCooldown(node);
    if (this.byId.get(node.definition.id) === node) this.byId.delete(node.definition.id);
    if (node.outstanding === 0) void this.closeEngine(node);
  }

  private async closeEngine(node: NodeRuntime): Promise<void> {
    this.clearCooldown(node);
    if (node.closed) return;
    node.closed = true;
    try {
      await node.engine.close();
    } catch (error) {
      this.options.log('warn', `compute node ${node.definition.id} did not close cleanly: ${(error as Error).message}`);
    }
  }
}

function describe(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer in time';
  return error instanceof Error ? error.message : String(error);
}
