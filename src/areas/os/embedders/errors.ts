/** An embedder could not give a vector now (node down, model gone, built-in still preparing). */
export class EmbedderUnavailableError extends Error {
  override name = 'EmbedderUnavailableError';

  constructor(
    message: string,
    /** `preparing`: the built-in embedder is not ready yet (it will be); `failed`: anything else. */
    readonly reason: 'preparing' | 'failed' = 'failed',
  ) {
    super(message);
  }
}
