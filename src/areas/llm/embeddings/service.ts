// Embeddings from a compute node's model, for whoever needs vectors of a tenant's
// text: document ingestion and retrieval in the os area (handed this function by the
// composition root). The router picks the node exactly as it does for chat.
import type { ModelRouter } from '../router/types.js';

export interface EmbeddingDeps {
  router: ModelRouter;
  /** How long one embedding call may take in all. */
  timeoutMs: number;
}

/**
 * One vector per text, in order. Throws AppError 400 for a model the tenant cannot
 * use, 503 when no node serving it is healthy, and the engine's error otherwise.
 */
export async function embedTexts(deps: EmbeddingDeps, tenantId: string, model: string, texts: string[]): Promise<number[][]> {
  const resolved = await deps.router.resolveModel(tenantId, model);
  const signal = AbortSignal.timeout(deps.timeoutMs);
  const { value, lease } = await deps.router.dispatch(tenantId, resolved, (lease) =>
    lease.engine.embed({ model: resolved, input: texts, signal }),
  );
  lease.release('ok');
  return value;
}
