// Reranking on an OpenAI-compatible server. OpenAI itself has no such endpoint; the
// servers that do share one shape (vLLM, llama.cpp server, Jina, Cohere):
// POST /v1/rerank {model, query, documents} → {results: [{index, relevance_score}]}.
// Some serve it at /rerank only (TEI, which names the documents `texts` and answers a
// bare array of {index, score}): a 404 for the path (not the model) on /v1/rerank is
// asked again there, with both names of the documents field.
import type { EngineHttp } from '../http/client.js';
import { EngineError, type RerankRequest, type RerankResult } from '../types.js';

interface RerankItem {
  index?: unknown;
  relevance_score?: unknown;
  score?: unknown;
}

interface RerankAnswer {
  results?: RerankItem[];
  usage?: { prompt_tokens?: unknown; total_tokens?: unknown };
}

export async function rerank(http: EngineHttp, request: RerankRequest): Promise<RerankResult> {
  const body = { model: request.model, query: request.query, documents: request.documents, return_documents: false };
  let answer: RerankAnswer | RerankItem[];
  try {
    answer = await http.json<RerankAnswer>('POST', '/v1/rerank', body, request.signal, request.model);
  } catch (error) {
    if (!(error instanceof EngineError) || error.failure !== 'endpoint_missing') throw error;
    answer = await http.json<RerankAnswer | RerankItem[]>(
      'POST',
      '/rerank',
      { ...body, texts: request.documents },
      request.signal,
      request.model,
    );
  }
  return resultOf(http, answer, request.documents.length);
}

/** Scores by document index; every document must have exactly one finite score. */
function resultOf(http: EngineHttp, answer: RerankAnswer | RerankItem[], count: number): RerankResult {
  const items = Array.isArray(answer) ? answer : answer?.results;
  if (!Array.isArray(items) || items.length !== count) http.malformed('a rerank result');
  const scores: number[] = new Array(count);
  for (const item of items) {
    const index = item?.index;
    const score = typeof item?.relevance_score === 'number' ? item.relevance_score : item?.score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || scores[index] !== undefined)
      http.malformed('a rerank result');
    if (typeof score !== 'number' || !Number.isFinite(score)) http.malformed('a rerank result');
    scores[index] = score;
  }
  const usage = Array.isArray(answer) ? undefined : answer.usage;
  const tokens = usage?.prompt_tokens ?? usage?.total_tokens;
  return { scores, ...(typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? { promptTokens: tokens } : {}) };
}
