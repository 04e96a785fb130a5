// What a listed model is for, where that can be told. Nodes' model lists do not say
// (OpenAI's /v1/models has no such field; vLLM, llama.cpp server and TEI list a reranker
// like any model), so a reranker is told by what the engine knows (the `local` engine
// reads a GGUF's pooling type) or else by its name: every common reranker has "rerank"
// in it (bge-reranker-v2-m3, jina-reranker-v2-base, mxbai-rerank-large, Qwen3-Reranker,
// rerank-english-v3.0). A node operator who serves one under another name can still
// call POST /rerank with it: the kind only labels the list.
import type { AvailableModel } from '../router/types.js';

export type ModelKind = 'embedding' | 'rerank';

const RERANKER_NAME = /rerank/i;

export function kindOf(model: Pick<AvailableModel, 'id' | 'kind'>): ModelKind | undefined {
  if (model.kind) return model.kind;
  return RERANKER_NAME.test(model.id) ? 'rerank' : undefined;
}
