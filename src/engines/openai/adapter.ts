// Adapter for any OpenAI-compatible server (vLLM, llama.cpp server, LM Studio,
// OpenAI itself): /v1/models, /v1/chat/completions (JSON and SSE), /v1/embeddings,
// /v1/rerank (rerank.ts) and the legacy /v1/completions (completions.ts). Chat requests pass through:
// messages and options go as OpenAI names them, and answers come back whole (tool
// calls, choices, logprobs: answers.ts reads them).
import { EngineHttp } from '../http/client.js';
import { engineError, streamError } from '../http/errors.js';
import { SseParser } from '../http/lines.js';
import { cancellable, release } from '../http/stream.js';
import type { ResponseBody } from '../http/client.js';
import {
  EngineError,
  type ChatBatch,
  type ChatRequest,
  type ChatResult,
  type CompletionRequest,
  type CompletionResult,
  type EmbedRequest,
  type Engine,
  type EngineModel,
  type EngineNodeOptions,
  type EngineUsage,
  type PullProgress,
  type PullRequest,
  type RerankRequest,
  type RerankResult,
} from '../types.js';
import { choicesOf, fingerprintOf, StreamedAnswer } from './answers.js';
import { complete, completeStream } from './completions.js';
import { rerank } from './rerank.js';
import type { OpenAIChatChunk, OpenAIChatCompletion, OpenAIEmbeddings, OpenAIModelList, OpenAIUsage } from './protocol.js';

export class OpenAIEngine implements Engine {
  readonly kind = 'openai' as const;
  private readonly http: EngineHttp;

  constructor(options: EngineNodeOptions) {
    // Operators write the base URL with or without `/v1`; we add it to every path.
    this.http = new EngineHttp({ ...options, kind: 'openai', stripSuffix: '/v1' });
  }

  async listModels(signal: AbortSignal): Promise<EngineModel[]> {
    const list = await this.http.json<OpenAIModelList>('GET', '/v1/models', undefined, signal);
    if (!Array.isArray(list?.data)) this.http.malformed('its model list');
    const models: EngineModel[] = [];
    for (const m of list.data) {
      if (typeof m?.id !== 'string') continue;
      models.push({
        id: m.id,
        ...(typeof m.created === 'number' ? { created: m.created } : {}),
        ...(typeof m.owned_by === 'string' ? { ownedBy: m.owned_by } : {}),
      });
    }
    return models;
  }

  async health(signal: AbortSignal): Promise<void> {
    await this.listModels(signal);
  }

  async chat(request: ChatRequest): Promise<ChatResult> {
    const answer = await this.http.json<OpenAIChatCompletion>(
      'POST',
      '/v1/chat/completions',
      chatBody(request, false),
      request.signal,
      request.model,
    );
    if (answer?.error) throw inBandError(this.http, answer.error, request.signal, true);
    const choices = answer ? choicesOf(answer, request.options?.n ?? 1) : undefined;
    if (!choices) this.http.malformed('a chat completion');
    const result: ChatResult = { ...choices[0]!, usage: usageOf(answer.usage) };
    if (choices.length > 1) result.moreChoices = choices.slice(1);
    const fingerprint = fingerprintOf(answer.system_fingerprint);
    if (fingerprint !== undefined) result.systemFingerprint = fingerprint;
    return result;
  }

  async chatStream(request: ChatRequest): Promise<AsyncIterable<ChatBatch>> {
    const response = await this.http.send('POST', '/v1/chat/completions', chatBody(request, true), request.signal, request.model);
    return cancellable(response.body, this.chunks(response.body, request.signal, new StreamedAnswer(request.options?.n ?? 1)));
  }

  private async *chunks(body: ResponseBody, signal: AbortSignal, answer: StreamedAnswer): AsyncGenerator<ChatBatch, void, undefined> {
    const sse = new SseParser();
    const events: string[] = [];
    let usage: EngineUsage = {};
    let done = false;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (done) continue; // after [DONE]: read the (empty) rest so the connection stays reusable
        sse.push(chunk, events);
        const batch: ChatBatch = [];
        // A bad frame fails the stream, but only after the text before it has been handed over.
        let failure: EngineError | undefined;
        for (let i = 0; i < events.length; i++) {
          const data = events[i]!;
          if (data === '[DONE]') {
            done = true;
            break;
          }
          let frame: OpenAIChatChunk;
          try {
            frame = JSON.parse(data) as OpenAIChatChunk;
          } catch {
            failure = engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} sent a stream frame that is not JSON`, {
              retryable: false,
            });
            break;
          }
          // A frame that is JSON but not an object (`null`, `5`) carries nothing: skipped.
          if (frame === null || typeof frame !== 'object') continue;
          if (frame.error) {
            failure = inBandError(this.http, frame.error, signal, false);
            break;
          }
          if (frame.usage) usage = usageOf(frame.usage);
          answer.read(frame.choices, frame.system_fingerprint, batch);
        }
        events.length = 0;
        if (done) batch.push(answer.end(usage));
        if (batch.length > 0) yield batch;
        if (failure) throw failure;
      }
      if (!done) {
        // A last event without its blank line still counts, as long as it is [DONE].
        sse.end(events);
        if (events.includes('[DONE]')) yield [answer.end(usage)];
        else
          throw engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} ended its stream without [DONE]`, {
            retryable: false,
          });
      }
    } catch (err) {
      // Once [DONE] has been seen the answer is complete; a late socket error changes nothing.
      if (!done) throw streamError(this.http.ctx, err, signal);
    } finally {
      release(body);
    }
  }

  async embed(request: EmbedRequest): Promise<number[][]> {
    const answer = await this.http.json<OpenAIEmbeddings>('POST', '/v1/embeddings', embedBody(request), request.signal, request.model);
    const count = request.tokens?.length ?? request.input.length;
    if (!Array.isArray(answer?.data) || answer.data.length !== count) this.http.malformed('embeddings');
    const vectors: number[][] = new Array(count);
    for (const item of answer.data) {
      const index = item?.index;
      if (typeof index !== 'number' || index < 0 || index >= vectors.length || !Array.isArray(item.embedding))
        this.http.malformed('embeddings');
      vectors[index] = item.embedding;
    }
    return vectors;
  }

  rerank(request: RerankRequest): Promise<RerankResult> {
    return rerank(this.http, request);
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return complete(this.http, request);
  }

  completeStream(request: CompletionRequest): Promise<AsyncIterable<ChatBatch>> {
    return completeStream(this.http, request);
  }

  // An async generator that only throws: the failure comes at the first next(), as every engine's pull failures do.
  // biome-ignore lint/correctness/useYield: see above
  async *pull(request: PullRequest): AsyncIterable<PullProgress> {
    throw new EngineError(
      'rejected',
      `OpenAI-compatible servers cannot pull models (asked for "${request.model}"); load it on the server itself`,
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function embedBody(request: EmbedRequest): object {
  return {
    model: request.model,
    input: request.tokens ?? request.input,
    encoding_format: 'float',
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
  };
}

/**
 * The request as OpenAI's wire format has it: the options keep OpenAI's names, so
 * they go as the client sent them (validated at the edge, never copied).
 */
function chatBody(request: ChatRequest, stream: boolean): object {
  const body = {
    model: request.model,
    messages: request.messages,
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    stream,
    ...request.options,
  };
  return stream ? { ...body, stream_options: { include_usage: true } } : body;
}

function usageOf(usage: OpenAIUsage | null | undefined): EngineUsage {
  if (!usage) return {};
  return {
    ...(typeof usage.prompt_tokens === 'number' ? { promptTokens: usage.prompt_tokens } : {}),
    ...(typeof usage.completion_tokens === 'number' ? { completionTokens: usage.completion_tokens } : {}),
  };
}

/** vLLM and others report failures inside a 200 answer as `{"error": …}`. */
function inBandError(http: EngineHttp, error: unknown, signal: AbortSignal, beforeOutput: boolean): EngineError {
  const message =
    typeof error === 'string'
      ? error
      : typeof (error as { message?: unknown })?.message === 'string'
        ? (error as { message: string }).message
        : JSON.stringify(error);
  if (signal.aborted) return engineError(http.ctx, 'aborted', `${http.ctx.label}: request cancelled by the caller`, { retryable: false });
  return engineError(http.ctx, 'upstream_error', `${http.ctx.label} reported an error: ${message}`, { retryable: beforeOutput });
}
