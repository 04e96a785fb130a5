// The contract between the llm area's request handlers (chat, pull) and the
// router that owns the compute nodes. Handlers never pick nodes themselves.
import type { Engine, EngineKind } from '../../../engines/types.js';
import type { TenantLlmSettings } from '../settings/schemas.js';

/** A compute node as handlers and usage records see it (never its URL credentials). */
export interface NodeView {
  id: string;
  name: string;
  engine: EngineKind;
  /** The tenants it serves; empty: every tenant. */
  tenantIds: readonly string[];
}

/** One entry of `GET /api/llm/v1/models`. */
export interface AvailableModel {
  id: string;
  /** Unix seconds. */
  created: number;
  ownedBy: string;
  /** What the engine says the model is for (a reranker), when it says. */
  kind?: 'rerank';
}

/** The node chosen for one request; counts as outstanding until released. */
export interface Lease {
  node: NodeView;
  engine: Engine;
  /**
   * Call exactly once, when the response has finished (after a stream's last frame).
   * `failed`: the engine failed (mid-stream death, garbage): counts towards the
   * node's cooldown. A client going away is not the node's fault: `ok`.
   * Later calls are ignored.
   */
  release(outcome: 'ok' | 'failed'): void;
  /**
   * Milliseconds from the first engine attempt of this dispatch to this node accepting
   * the call (failed attempts before it included): the engine's share of the request,
   * as Server-Timing reports it. 0 for leases not taken by dispatch.
   */
  engineMs: number;
}

/** The tenant's llm settings: defined with their schema in llm/settings/schemas.ts. */
export type { TenantLlmSettings };

export interface ModelRouter {
  /** Models the tenant may use now (healthy nodes, allowedModels applied), without `auto`. No I/O. */
  availableModels(tenantId: string): Promise<AvailableModel[]>;
  settings(tenantId: string): Promise<TenantLlmSettings>;
  /**
   * The model `auto` stands for now (the tenant's default while a healthy node serves
   * it, else the first available model), or undefined when nothing serves it. No I/O.
   */
  autoModel(tenantId: string): Promise<string | undefined>;
  /**
   * `auto` → the tenant's default (or the first available model). Throws AppError
   * 400 (VALIDATION_FAILED on `model`) for an id no node visible to the tenant has
   * ever listed or that allowedModels excludes; 503 with Retry-After when the model
   * is known but no node serving it is healthy now. `auto` with no model anywhere is
   * a 503 naming the ways to get one, with Retry-After only while a node is not up yet.
   */
  resolveModel(tenantId: string, requested: string): Promise<string>;
  /**
   * Runs `attempt` on the least-busy healthy node serving `model` for the tenant.
   * A retryable EngineError moves on to the next node (config.llm.maxAttempts in
   * all) and counts against the failing node (cooldown after repeated failures);
   * other errors are thrown at once. When every attempt fails: AppError 503 with
   * Retry-After. On success the lease stays outstanding until released.
   */
  dispatch<T>(tenantId: string, model: string, attempt: (lease: Lease) => Promise<T>): Promise<{ value: T; lease: Lease }>;
  /** The node a tenant admin pulls models into for `engine` (403/404/503 as AppError when none). */
  pullTarget(tenantId: string, engine: EngineKind): Promise<Lease>;
  /**
   * Probes the node now (or every node without an id) and takes its fresh model
   * list, e.g. right after a pull, so the new model is usable at once.
   */
  refresh(nodeId?: string): Promise<void>;
}
