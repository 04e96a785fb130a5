// Reranking with a compute node's model: scores of documents against a query, for the
// rerank route and for retrieval in the os area (handed `rerankTexts` by the
// composition root). The router picks the node exactly as it does for embeddings.
import { EngineError, type RerankResult } from '../../../engines/types.js';
import type { Lease, ModelRouter } from '../router/types.js';

export interface RerankDeps {
  router: Pick<ModelRouter, 'resolveModel' | 'dispatch'>;
  /** How long one rerank call may take in all. */
  timeoutMs: number;
}

/**
 * One attempt on the node the router chose. An engine without reranking (Ollama) counts
 * as a node lacking the endpoint: another node serving the model may have it, and when
 * none does the caller gets a 400 saying so.
 */
export async function rerankOn(
  lease: Lease,
  model: string,
  query: string,
  documents: string[],
  signal: AbortSignal,
): Promise<RerankResult> {
  const engine = lease.engine;
  if (!engine.rerank)
    throw new EngineError('endpoint_missing', `the ${engine.kind} engine has no rerank endpoint`, { endpoint: `${engine.kind} rerank` });
  const result = await engine.rerank({ model, query, documents, signal });
  // Engines are untrusted: one finite score per document, or it is the node's failure.
  if (result.scores.length !== documents.length || !result.scores.every(Number.isFinite))
    throw new EngineError('upstream_error', `${lease.node.name} answered rerank scores that do not match the documents`);
  return result;
}

/**
 * One score per document, in order, as the engine gives them (0..1 for sigmoid rerankers).
 * Throws AppError 400 for a model the tenant cannot use, 503 when no node serving it is
 * healthy, EngineError('endpoint_missing') when none can rerank, the engine's error otherwise.
 */
export async function rerankTexts(
  deps: RerankDeps,
  tenantId: string,
  model: string,
  query: string,
  documents: string[],
): Promise<number[]> {
  const resolved = await deps.router.resolveModel(tenantId, model);
  const signal = AbortSignal.timeout(deps.timeoutMs);
  const { value, lease } = await deps.router.dispatch(tenantId, resolved, (lease) => rerankOn(lease, resolved, query, documents, signal));
  lease.release('ok');
  return value.scores;
}
