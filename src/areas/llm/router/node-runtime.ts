// One compute node as the router holds it: what it is (definition), how to reach
// it (engine adapter), and what the router has learned about it (health, models,
// outstanding requests, consecutive failures, cooldown).
import type { Engine, EngineKind, EngineModel } from '../../../engines/types.js';
import type { NodeView } from './types.js';
import type { UrlScope } from '../outbound/url-guard.js';

export type NodeSource = 'config' | 'api';

/** Whether a node with these tenants serves `tenantId` (none listed: every tenant). */
export function serves(tenantIds: readonly string[], tenantId: string): boolean {
  return tenantIds.length === 0 || tenantIds.includes(tenantId);
}

/** Whether it is the tenant's own node: it serves that tenant alone, so no other tenant shares what it holds. */
export function ownedBy(tenantIds: readonly string[], tenantId: string): boolean {
  return tenantIds.length === 1 && tenantIds[0] === tenantId;
}
export type HealthStatus = 'healthy' | 'unhealthy' | 'cooldown' | 'disabled' | 'unknown';

/** A node as configured: from GATEWAY_NODES, the built-in local engine, or the compute_nodes table. */
export interface NodeDefinition {
  id: string;
  name: string;
  engine: EngineKind;
  /** Undefined for the local engine, which has no URL. */
  url: string | undefined;
  apiKey: string | undefined;
  /** Empty: every tenant. */
  tenantIds: string[];
  /** Whose deny list the URL is held to at every connection: who gave it (config and the local engine: platform). */
  urlScope: UrlScope;
  enabled: boolean;
  source: NodeSource;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A node's status as the API shows it: the router's, except that a healthy node
 * listing no model is `empty` (reachable, serves nothing), so a node with nothing
 * to offer, such as the local engine before its first pull, does not look like one that serves.
 */
export type ShownStatus = HealthStatus | 'empty';

export interface NodeHealth {
  status: ShownStatus;
  models: string[];
  checkedAt: string | null;
  lastError?: string;
}

export class NodeRuntime {
  readonly view: NodeView;
  status: HealthStatus = 'unknown';
  /** The last model list a successful probe returned (kept while the node is down: the model stays "known"). */
  models: EngineModel[] = [];
  /**
   * Every model id this node has listed since it was added, with the Unix seconds it
   * was first seen (for engines that report no `created`). Ids in here are never
   * "unknown" (400), only unavailable (503).
   */
  readonly firstSeen = new Map<string, number>();
  outstanding = 0;
  consecutiveFailures = 0;
  /** When the current cooldown ends (epoch ms; it began cooldownMs before). */
  cooldownUntil = 0;
  checkedAt: Date | null = null;
  lastError: string | undefined;
  /** A bus event said the definition changed: out of routing until the registry reloaded it. */
  stale = false;
  /** Replaced or removed: finishes its outstanding requests, takes no new ones, closes when idle. */
  retired = false;
  closed = false;
  probing: Promise<void> | null = null;
  cooldownTimer: NodeJS.Timeout | null = null;

  constructor(
    public definition: NodeDefinition,
    readonly engine: Engine,
  ) {
    this.view = { id: definition.id, name: definition.name, engine: definition.engine, tenantIds: definition.tenantIds };
    if (!definition.enabled) this.status = 'disabled';
  }

  /** Takes new definition fields that do not need a new engine (name, tenants, enabled). */
  update(definition: NodeDefinition): void {
    this.definition = definition;
    this.view.name = definition.name;
    this.view.tenantIds = definition.tenantIds;
    if (!definition.enabled) this.status = 'disabled';
    else if (this.status === 'disabled') this.status = 'unknown';
  }

  /** Whether the definition's connection details differ: then the engine must be rebuilt. */
  needsNewEngine(next: NodeDefinition): boolean {
    const d = this.definition;
    return d.engine !== next.engine || d.url !== next.url || d.apiKey !== next.apiKey || d.urlScope !== next.urlScope;
  }

  visibleTo(tenantId: string): boolean {
    return serves(this.definition.tenantIds, tenantId);
  }

  /** Takes requests now: enabled, healthy, current. */
  get routable(): boolean {
    return this.status === 'healthy' && this.definition.enabled && !this.stale && !this.retired;
  }

  serves(model: string): boolean {
    return this.models.some((m) => m.id === model);
  }

  recordModels(models: EngineModel[], now: Date): void {
    this.models = models;
    const seconds = Math.floor(now.getTime() / 1000);
    for (const m of models) if (!this.firstSeen.has(m.id)) this.firstSeen.set(m.id, m.created ?? seconds);
  }

  health(): NodeHealth {
    return {
      status: this.status === 'healthy' && this.models.length === 0 ? 'empty' : this.status,
      models: this.models.map((m) => m.id),
      checkedAt: this.checkedAt?.toISOString() ?? null,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }
}
