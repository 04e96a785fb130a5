// The tenant's models (GET /api/llm/v1/models): the playground's chat models, the
// documents' embedders and rerankers, retrieval's rerankers and compute's list all read it.
import type { ModelList } from '../../../src/areas/llm/models/schemas.js';
import { api } from '../api/client.js';
import { type Loaded, useLoad } from './use-load.js';

/** Loads again when any of `deps` changes (e.g. compute's version after a pull). */
export const useModels = (deps: unknown[] = []): Loaded<ModelList> =>
  useLoad((signal) => api<ModelList>('/api/llm/v1/models', { signal }), deps);
