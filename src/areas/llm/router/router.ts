// The ModelRouter (see types.ts): models → the healthy nodes serving them for the
// caller's tenant, least outstanding requests first, bounded failover before the
// handler has sent anything, cooldown of nodes that keep failing. Everything on
// the request path is in memory: node state here, tenant settings in their cache.
import type { LlmObserver } from '../observer.js';
import { EngineError, type EngineKind } from '../../../engines/types.js';
import { AppError, validation } from '../../../platform/errors.js';
import { ownedBy, type NodeRuntime } from './node-runtime.js';
import type { NodeRegistry } from './registry.js';
import type { TenantSettingsCache } from './tenant-settings.js';
import type { AvailableModel, Lease, ModelRouter, TenantLlmSettings } from './types.js';
import { waysToAModel } from './no-model.js';

export interface RouterOptions {
  maxAttempts: number;
  /** Retry-After when no cooldown end is known: the next health check. */
  healthIntervalSeconds: number;
}

const AUTO = 'auto';
/** What a node lacks for one request (the model, or the endpoint): another node may have it; nothing counts against this one. */
const ABSENT = new Set(['model_not_found', 'endpoint_missing']);

export class Router implements ModelRouter {
  private rotation = 0;
  /** Engine latency and failures for /metrics; unset when metrics are off. */
  observer: LlmObserver | undefined;

  constructor(
    private readonly registry: NodeRegistry,
    private readonly tenants: TenantSettingsCache,
    private readonly options: RouterOptions,
  ) {}

  async settings(tenantId: string): Promise<TenantLlmSettings> {
    return this.tenants.get(tenantId);
  }

  async availableModels(tenantId: string): Promise<AvailableModel[]> {
    await this.registry.whenReady();
    return this.available(tenantId, await this.tenants.get(tenantId));
  }

  async resolveModel(tenantId: string, requested: string): Promise<string> {
    await this.registry.whenReady();
    return this.resolveWith(tenantId, await this.tenants.get(tenantId), requested);
  }

  /**
   * resolveModel without a promise once the registry is ready and the tenant's settings
   * are cached, as they are on every request but the first: dispatch runs it per request.
   */
  private resolveNow(tenantId: string, requested: string): string | Promise<string> {
    const settings = this.registry.whenReady() === undefined ? this.tenants.get(tenantId) : undefined;
    if (settings === undefined || settings instanceof Promise) return this.resolveModel(tenantId, requested);
    return this.resolveWith(tenantId, settings, requested);
  }

  private resolveWith(tenantId: string, settings: TenantLlmSettings, requested: string): string {
    if (requested !== AUTO) {
      this.check(tenantId, settings, requested);
      return requested;
    }
    const resolved = this.autoNow(tenantId, settings);
    if (resolved !== undefined) return resolved;
    if (settings.defaultModel !== null) {
      // The tenant's own choice: if its nodes are down that is an outage, not the caller's mistake.
      throw this.unavailable(
        tenantId,
        settings.defaultModel,
        `The tenant's default model "${settings.defaultModel}" is not available on any healthy compute node right now. Retry later.`,
      );
    }
    throw this.noModel(tenantId, settings);
  }

  async autoModel(tenantId: string): Promise<string | undefined> {
    await this.registry.whenReady();
    return this.autoNow(tenantId, await this.tenants.get(tenantId));
  }

  /** What `auto` stands for now: the tenant's default while a healthy node serves it, else the first available model. */
  private autoNow(tenantId: string, settings: TenantLlmSettings): string | undefined {
    const preferred = settings.defaultModel;
    if (preferred === null) return this.firstAvailable(tenantId, settings);
    return this.nodesFor(tenantId, preferred).some((n) => n.routable && n.serves(preferred)) ? preferred : undefined;
  }

  /**
   * No model for `auto`. While some node of the tenant is not up yet (starting, down,
   * cooled down) a retry may help: 503 with Retry-After. Otherwise nothing is coming
   * until someone acts, so the answer says what to do and asks for no retry.
   */
  private noModel(tenantId: string, settings: TenantLlmSettings): AppError {
    const nodes = this.registry.nodes().filter((n) => n.visibleTo(tenantId) && n.definition.enabled && !n.retired);
    const waiting = nodes.filter((n) => !n.routable);
    if (waiting.length > 0) {
      return new AppError(
        'SERVICE_UNAVAILABLE',
        `No model is available to this tenant right now: ${waiting.length} of its ${nodes.length} compute node(s) cannot be reached at the moment, and the others serve none. Retry later.`,
        { retryAfterSeconds: this.retryAfter(waiting) },
      );
    }
    const served = nodes.some((n) => n.models.length > 0);
    const detail =
      served && settings.allowedModels !== null
        ? 'No model is available to this tenant: none of the models its allowedModels names is served. A tenant admin can change allowedModels (PATCH /api/auth/tenants/{tenantId}), or an operator can serve one of them: ' +
          `${waysToAModel(new Set(nodes.map((n) => n.definition.engine)))}.`
        : `No model is available to this tenant yet: no compute node serves one. To add one, ${waysToAModel(new Set(nodes.map((n) => n.definition.engine)))}.`;
    return new AppError('SERVICE_UNAVAILABLE', detail, { final: true });
  }

  async dispatch<T>(tenantId: string, model: string, attempt: (lease: Lease) => Promise<T>): Promise<{ value: T; lease: Lease }> {
    const now = this.resolveNow(tenantId, model);
    const resolved = typeof now === 'string' ? now : await now;
    const tried = new Set<NodeRuntime>();
    let failed = 0;
    let missing = 0;
    let lacking: EngineError | undefined;
    let lastFailure: EngineError | undefined;
    let started: number | undefined;
    for (let n = 0; n < this.options.maxAttempts; n++) {
      const node = this.pick(tenantId, resolved, tried);
      if (!node) break;
      tried.add(node);
      const lease = this.lease(node);
      const attemptStarted = performance.now();
      started ??= attemptStarted;
      try {
        const value = await attempt(lease);
        const accepted = performance.now();
        lease.engineMs = accepted - started;
        this.observer?.engineAccepted(node.view, accepted - attemptStarted);
        return { value, lease };
      } catch (error) {
        // A caller that went away is not a failure of the engine's.
        if (!(error instanceof EngineError)) this.observer?.engineFailed(node.view, 'other');
        else if (error.failure !== 'aborted') this.observer?.engineFailed(node.view, error.failure);
        if (!(error instanceof EngineError) || (!error.retryable && !ABSENT.has(error.failure))) {
          lease.settle('neutral');
          throw error;
        }
        if (error.failure === 'model_not_found') {
          // Not the node's fault, and not this request's to decide for everyone: the node's
          // model list is shared by every tenant it serves, so only a probe of its listing
          // may change it. This request tries another node; the probe re-reads the truth.
          lease.settle('neutral');
          this.registry.confirmModels(node);
          missing++;
        } else if (error.failure === 'endpoint_missing') {
          // The node lacks the endpoint (say, /v1/embeddings), not the model: another node
          // serving the model may have it. Nothing about the node changes.
          lease.settle('neutral');
          lacking = error;
        } else {
          lease.settle('failed', `${error.failure}: ${error.message}`);
          failed++;
          lastFailure = error;
        }
      }
    }
    // Every node tried lacks the endpoint (or the model): the caller learns which endpoint, as a 400.
    if (failed === 0 && lacking) throw lacking;
    if (failed === 0 && missing > 0) {
      throw this.unavailable(
        tenantId,
        resolved,
        `Model "${resolved}" is not loaded on any node that serves this tenant. Pull or load it there, then retry.`,
      );
    }
    if (tried.size === 0)
      throw this.unavailable(tenantId, resolved, `No healthy compute node serves model "${resolved}" right now. Retry later.`);
    const why = lastFailure ? ` (last failure: ${lastFailure.failure})` : '';
    throw this.unavailable(
      tenantId,
      resolved,
      `Model "${resolved}" is unavailable: ${tried.size} compute node(s) failed to answer${why}. Retry later.`,
    );
  }

  async pullTarget(tenantId: string, engine: EngineKind): Promise<Lease> {
    if (engine === 'openai') throw new AppError('NOT_FOUND', 'OpenAI-compatible nodes cannot pull models; pull into "ollama" or "local".');
    await this.registry.whenReady();
    const nodes = this.registry
      .nodes()
      .filter((n) => n.definition.engine === engine && n.definition.enabled && n.visibleTo(tenantId) && !n.stale && !n.retired);
    if (nodes.length === 0) {
      throw new AppError(
        'NOT_FOUND',
        engine === 'local' ? 'The local engine is turned off on this server.' : 'No Ollama compute node serves this tenant.',
      );
    }
    const healthy = nodes.filter((n) => n.routable);
    if (healthy.length === 0) {
      throw new AppError('SERVICE_UNAVAILABLE', `No healthy ${engine} compute node can take the pull right now. Retry later.`, {
        retryAfterSeconds: this.retryAfter(nodes),
      });
    }
    // The tenant's own node first: pulling into a shared node fills a disk other tenants share.
    const own = healthy.filter((n) => ownedBy(n.definition.tenantIds, tenantId));
    return this.lease(this.leastBusy(own.length > 0 ? own : healthy));
  }

  refresh(nodeId?: string): Promise<void> {
    return this.registry.refresh(nodeId);
  }

  private available(tenantId: string, settings: TenantLlmSettings): AvailableModel[] {
    const allowed = settings.allowedModels ? new Set(settings.allowedModels) : undefined;
    const models = new Map<string, AvailableModel>();
    for (const node of this.registry.nodes()) {
      if (!node.routable || !node.visibleTo(tenantId)) continue;
      for (const m of node.models) {
        if (models.has(m.id) || (allowed && !allowed.has(m.id))) continue;
        models.set(m.id, {
          id: m.id,
          created: node.firstSeen.get(m.id) ?? 0,
          ownedBy: m.ownedBy ?? node.definition.engine,
          ...(m.kind ? { kind: m.kind } : {}),
        });
      }
    }
    return [...models.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The id available() lists first, found without building and sorting the list: `auto` asks for it on every request. */
  private firstAvailable(tenantId: string, settings: TenantLlmSettings): string | undefined {
    const allowed = settings.allowedModels;
    let first: string | undefined;
    for (const node of this.registry.nodes()) {
      if (!node.routable || !node.visibleTo(tenantId)) continue;
      for (const { id } of node.models) {
        if ((first === undefined || id < first) && (!allowed || allowed.includes(id))) first = id;
      }
    }
    return first;
  }

  /** Nodes visible to the tenant that have listed `model` at some point. */
  private nodesFor(tenantId: string, model: string): NodeRuntime[] {
    return this.registry.nodes().filter((n) => n.visibleTo(tenantId) && n.firstSeen.has(model));
  }

  /** 400 for a model the tenant cannot name; 503 for one it can, with no healthy node now. */
  private check(tenantId: string, settings: TenantLlmSettings, model: string): void {
    const unknown = () => validation('model', `unknown model "${model}"; GET /api/llm/v1/models lists the models available to you`);
    if (settings.allowedModels && !settings.allowedModels.includes(model)) throw unknown();
    const nodes = this.nodesFor(tenantId, model);
    if (nodes.length === 0) throw unknown();
    if (!nodes.some((n) => n.routable && n.serves(model))) {
      const loaded = nodes.some((n) => n.routable);
      throw this.unavailable(
        tenantId,
        model,
        loaded
          ? `Model "${model}" is not loaded on any node that serves this tenant. Pull or load it there, then retry.`
          : `No healthy compute node serves model "${model}" right now. Retry later.`,
      );
    }
  }

  private pick(tenantId: string, model: string, tried: Set<NodeRuntime>): NodeRuntime | undefined {
    const candidates = this.registry.nodes().filter((n) => n.routable && !tried.has(n) && n.visibleTo(tenantId) && n.serves(model));
    return candidates.length === 0 ? undefined : this.leastBusy(candidates);
  }

  /** Fewest outstanding requests; ties take turns, so equal nodes share the load. */
  private leastBusy(nodes: NodeRuntime[]): NodeRuntime {
    let least = Infinity;
    for (const n of nodes) least = Math.min(least, n.outstanding);
    const ties = nodes.filter((n) => n.outstanding === least);
    return ties[this.rotation++ % ties.length]!;
  }

  private lease(node: NodeRuntime): Lease & { settle(outcome: 'ok' | 'failed' | 'neutral', reason?: string): void } {
    node.outstanding++;
    let settled = false;
    const settle = (outcome: 'ok' | 'failed' | 'neutral', reason?: string) => {
      if (settled) return;
      settled = true;
      // Failures before the answer are counted by dispatch with their kind; a release as failed is one after it.
      if (outcome === 'failed' && reason === undefined) this.observer?.engineFailed(node.view, 'mid_stream');
      node.outstanding--;
      if (outcome === 'ok') this.registry.recordSuccess(node);
      if (outcome === 'failed') this.registry.recordFailure(node, reason ?? 'the response failed');
      this.registry.released(node);
    };
    return { node: node.view, engine: node.engine, release: (outcome) => settle(outcome), settle, engineMs: 0 };
  }

  private unavailable(tenantId: string, model: string | undefined, detail: string): AppError {
    const nodes = model === undefined ? this.registry.nodes().filter((n) => n.visibleTo(tenantId)) : this.nodesFor(tenantId, model);
    return new AppError('SERVICE_UNAVAILABLE', detail, { retryAfterSeconds: this.retryAfter(nodes) });
  }

  /** The soonest a cooled-down node is probed again, else the next health check. */
  private retryAfter(nodes: readonly NodeRuntime[]): number {
    const now = Date.now();
    let seconds = this.options.healthIntervalSeconds;
    for (const n of nodes) if (n.status === 'cooldown') seconds = Math.min(seconds, Math.ceil((n.cooldownUntil - now) / 1000));
    return Math.max(1, seconds);
  }
}
