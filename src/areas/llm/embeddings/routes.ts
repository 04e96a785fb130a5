// POST /api/llm/v1/embeddings: OpenAI's embeddings endpoint for API keys and
// signed-in users. The model is resolved and routed as chat's is; the vectors come
// back as floats or, with encoding_format "base64" (what the openai SDK asks for by
// default, and decodes), as their little-endian float32 bytes. The gateway's built-in
// embedder (listed by GET /models) answers here too. Inputs are never logged.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EngineError, type EngineKind } from '../../../engines/types.js';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { failedUnaryCall, unaryCallRecorder } from '../usage/unary-call.js';
import { problems } from '../../schemas.js';
import { toHttpFailure } from '../chat/engine-failures.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { ModelRouter } from '../router/types.js';
import { countTextTokens } from '../tokens/count.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { parseInput, type EmbeddingInput } from './input.js';
import { EmbeddingBody, EmbeddingList } from './schemas.js';

/** The os area's embedders (os/embedders/embedders.ts), for the models the gateway serves itself. */
export interface BuiltInEmbedding {
  embed(tenantId: string, embedder: string, texts: string[]): Promise<ArrayLike<number>[]>;
  /** Throws AppError 503 (with Retry-After while it is coming) when `embedder` is not ready to answer now. */
  refuseWhilePreparing(embedder: string): void;
}

export interface EmbeddingRouteDeps {
  router: Pick<ModelRouter, 'resolveModel' | 'dispatch'>;
  usage: UsageRecorder;
  calls: OpenCalls;
  retryAfterSeconds: number;
  /** The built-in embedders GET /models lists (none without pgvector), answered here too. */
  builtIn: { ids: readonly string[]; embedders: BuiltInEmbedding };
}

/** What only an `openai` node forwards: other engines have no such parameter (their refusal is a 400 naming the field). */
function refuseUnsupported(kind: EngineKind, input: EmbeddingInput, dimensions: number | undefined): void {
  if (kind === 'openai') return;
  if (dimensions !== undefined)
    throw new EngineError(
      'unsupported',
      `dimensions: the ${kind} engine serving this model cannot shorten its embeddings; leave dimensions out`,
    );
  if ('tokens' in input)
    throw new EngineError('unsupported', `input: the ${kind} engine serving this model takes text only, not token ids; send the text`);
}

export const embeddingRoutes: FastifyPluginAsyncTypebox<{ deps: EmbeddingRouteDeps }> = async (app, { deps }) => {
  app.post(
    '/embeddings',
    {
      config: { access: 'tenant' },
      schema: { body: EmbeddingBody, response: { 200: EmbeddingList, ...problems(400, 401, 403, 404, 503) } },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const input = parseInput(body.input);
      const record = unaryCallRecorder(deps.usage, request, principal, 'embeddings');
      if (deps.builtIn.ids.includes(body.model)) {
        const vectors = await embedBuiltIn(deps.builtIn.embedders, principal.tenantId, body.model, input, body.dimensions, (error) => {
          if (error instanceof AppError) {
            record(body.model, null, 'unavailable', 0); // still being prepared
            return;
          }
          request.log.warn({ err: error, model: body.model }, 'built-in embedder failed');
          record(body.model, null, 'engine_error', 0);
        });
        const promptTokens = await tokensOf(input);
        record(body.model, null, 'ok', promptTokens);
        return listOf(vectors, body.model, body.encoding_format, promptTokens);
      }
      let model: string;
      try {
        model = await deps.router.resolveModel(principal.tenantId, body.model);
      } catch (error) {
        if ((error as { status?: number }).status === 503) record(body.model, null, 'unavailable', 0);
        throw error;
      }
      const client = deps.calls.watch(reply.raw);
      try {
        const { value: vectors, lease } = await deps.router.dispatch(principal.tenantId, model, async (lease) => {
          refuseUnsupported(lease.engine.kind, input, body.dimensions);
          const vectors = await lease.engine.embed({
            model,
            input: 'texts' in input ? input.texts : [],
            ...('tokens' in input ? { tokens: input.tokens } : {}),
            ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}),
            signal: client.signal,
          });
          // Engines are untrusted: a vector of anything but finite numbers is the node's failure, not an answer.
          if (!vectors.every((v) => Array.isArray(v) && v.every(Number.isFinite)))
            throw new EngineError('upstream_error', `${lease.node.name} answered embeddings that are not vectors of numbers`);
          return vectors;
        });
        lease.release('ok');
        const promptTokens = await tokensOf(input);
        if (client.gone()) {
          record(model, lease.node.id, 'client_closed', promptTokens);
          reply.hijack();
          return reply;
        }
        record(model, lease.node.id, 'ok', promptTokens);
        return listOf(vectors, model, body.encoding_format, promptTokens);
      } catch (error) {
        return failedUnaryCall(error, { client, reply, record, model }, (e) => toHttpFailure(e, deps.retryAfterSeconds));
      } finally {
        client.dispose();
      }
    },
  );
};

function listOf(vectors: readonly ArrayLike<number>[], model: string, format: EmbeddingBody['encoding_format'], promptTokens: number) {
  return {
    object: 'list' as const,
    data: vectors.map((vector, index) => ({
      object: 'embedding' as const,
      index,
      embedding: format === 'base64' ? toBase64(vector) : Array.from(vector),
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/**
 * The gateway's own embedder (the word vectors): text only, at its fixed length. While
 * its one-off preparation runs (converting the word vectors: 10-30 s, minutes on a busy
 * machine) the answer is a 503 with Retry-After at once, not a wait; its preparation or
 * worker failing is a 503 too (the same embedder collections use meanwhile).
 */
async function embedBuiltIn(
  embedders: BuiltInEmbedding,
  tenantId: string,
  model: string,
  input: EmbeddingInput,
  dimensions: number | undefined,
  failed: (error: unknown) => void,
): Promise<ArrayLike<number>[]> {
  if (dimensions !== undefined)
    throw new AppError('BAD_REQUEST', `dimensions: ${model} answers vectors of its one length; leave dimensions out`);
  if ('tokens' in input) throw new AppError('BAD_REQUEST', `input: ${model} takes text only, not token ids; send the text`);
  try {
    embedders.refuseWhilePreparing(model);
  } catch (error) {
    failed(error);
    throw error;
  }
  try {
    return await embedders.embed(tenantId, model, input.texts);
  } catch (error) {
    if (error instanceof AppError) throw error;
    failed(error);
    throw new AppError('SERVICE_UNAVAILABLE', `${model} cannot embed right now. Retry later.`, { retryAfterSeconds: 5 });
  }
}

/**
 * Input tokens for usage: engines' embedding answers carry no count the adapters
 * return, so text is counted with the gateway's tokenizer (o200k_base) and token
 * arrays by their length.
 */
async function tokensOf(input: EmbeddingInput): Promise<number> {
  if ('tokens' in input) return input.tokens.reduce((n, ids) => n + ids.length, 0);
  let total = 0;
  for (const text of input.texts) total += await countTextTokens(text);
  return total;
}

/** OpenAI's base64 form: the vector as little-endian float32 bytes. */
export function toBase64(vector: ArrayLike<number>): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}
