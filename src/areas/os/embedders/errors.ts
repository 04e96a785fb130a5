/** An embedder could not give a vector now (node down, model gone, built-in still preparing). */
export class EmbedderUnavailableError extends Error {
  override name = 'EmbedderUnavailableError';
}
