// POST /api/llm/v1/rerank: documents scored against a query by a reranker (a
// cross-encoder) on a compute node, for API keys and signed-in users. The model is
// resolved and routed as embeddings' is; `openai` nodes answer at /v1/rerank (or
// /rerank), the `local` engine with a GGUF reranker, Ollama not at all (a 400).
// Queries and documents are never logged.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EngineError } from '../../../engines/types.js';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { failedUnaryCall, unaryCallRecorder } from '../usage/unary-call.js';
import { problems } from '../../schemas.js';
import { toHttpFailure } from '../chat/engine-failures.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { ModelRouter } from '../router/types.js';
import { countTextTokens } from '../tokens/count.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { RerankBody, RerankList } from './schemas.js';
import { rerankOn } from './service.js';

export interface RerankRouteDeps {
  router: Pick<ModelRouter, 'resolveModel' | 'dispatch'>;
  usage: UsageRecorder;
  calls: OpenCalls;
  retryAfterSeconds: number;
}

export const rerankRoutes: FastifyPluginAsyncTypebox<{ deps: RerankRouteDeps }> = async (app, { deps }) => {
  app.post(
    '/rerank',
    {
      config: { access: 'tenant' },
      schema: { body: RerankBody, response: { 200: RerankList, ...problems(400, 401, 403, 404, 503) } },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const documents = body.documents.map((d) => (typeof d === 'string' ? d : d.text));
      const record = unaryCallRecorder(deps.usage, request, principal, 'rerank');
      let model: string;
      try {
        model = await deps.router.resolveModel(principal.tenantId, body.model);
      } catch (error) {
        if ((error as { status?: number }).status === 503) record(body.model, null, 'unavailable', 0);
        throw error;
      }
      const client = deps.calls.watch(reply.raw);
      try {
        const { value, lease } = await deps.router.dispatch(principal.tenantId, model, (lease) =>
          rerankOn(lease, model, body.query, documents, client.signal),
        );
        lease.release('ok');
        const promptTokens = value.promptTokens ?? (await tokensOf(body.query, documents));
        if (client.gone()) {
          record(model, lease.node.id, 'client_closed', promptTokens);
          reply.hijack();
          return reply;
        }
        record(model, lease.node.id, 'ok', promptTokens);
        const ranked = value.scores
          .map((relevance_score, index) => ({ index, relevance_score }))
          .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
          .slice(0, body.top_n ?? documents.length);
        return {
          id: `rerank-${randomUUID().replaceAll('-', '')}`,
          model,
          results: body.return_documents ? ranked.map((r) => ({ ...r, document: { text: documents[r.index]! } })) : ranked,
          usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
        };
      } catch (error) {
        return failedUnaryCall(error, { client, reply, record, model }, (e) =>
          e instanceof EngineError && e.failure === 'endpoint_missing' ? cannotRerank() : toHttpFailure(e, deps.retryAfterSeconds),
        );
      } finally {
        client.dispose();
      }
    },
  );
};

/** Every node serving the model lacks reranking: retrying changes nothing, another model may. */
function cannotRerank(): AppError {
  return new AppError(
    'BAD_REQUEST',
    'model: no compute node serving this model can rerank (an OpenAI-compatible node answered 404 at /v1/rerank and /rerank, or the engine has no reranking, as Ollama has none). Use a reranker served by vLLM, llama.cpp server, TEI or the local engine.',
  );
}

/**
 * Input tokens for usage when the engine reports none: a cross-encoder reads the query
 * with every document, so the query counts once per document (the gateway's tokenizer).
 */
async function tokensOf(query: string, documents: string[]): Promise<number> {
  const queryTokens = await countTextTokens(query);
  let total = 0;
  for (const text of documents) total += queryTokens + (await countTextTokens(text));
  return total;
}
