// Adapter for Ollama's native API: /api/tags, /api/chat (NDJSON stream or one
// JSON answer), /api/embed, /api/pull (NDJSON progress), /api/version for health.
// The OpenAI-shaped chat request is translated in request.ts, the answers read back
// in response.ts.
import { EngineHttp, type ResponseBody } from '../http/client.js';
import { engineError, streamError } from '../http/errors.js';
import { LineSplitter } from '../http/lines.js';
import { cancellable, release } from '../http/stream.js';
import type {
  ChatBatch,
  ChatRequest,
  ChatResult,
  EmbedRequest,
  Engine,
  EngineError,
  EngineModel,
  EngineNodeOptions,
  PullProgress,
  PullRequest,
} from '../types.js';
import type { OllamaChatFrame, OllamaEmbed, OllamaPullFrame, OllamaTags, OllamaVersion } from './protocol.js';
import { chatBody } from './request.js';
import { choiceLogprobs, finishReasonOf, logprobsOf, toolCallsOf, usageOf } from './response.js';

export class OllamaEngine implements Engine {
  readonly kind = 'ollama' as const;
  private readonly http: EngineHttp;

  constructor(options: EngineNodeOptions) {
    // Some operators paste the API root (`…/api`); every path below adds it.
    this.http = new EngineHttp({ ...options, kind: 'ollama', stripSuffix: '/api' });
  }

  async listModels(signal: AbortSignal): Promise<EngineModel[]> {
    const tags = await this.http.json<OllamaTags>('GET', '/api/tags', undefined, signal);
    if (!Array.isArray(tags?.models)) this.http.malformed('its model list');
    const models: EngineModel[] = [];
    for (const m of tags.models) {
      const id = m?.name ?? m?.model;
      if (typeof id !== 'string') continue;
      const modified = typeof m.modified_at === 'string' ? Date.parse(m.modified_at) : NaN;
      models.push({ id, ...(Number.isFinite(modified) ? { created: Math.floor(modified / 1000) } : {}) });
    }
    return models;
  }

  /** /api/version answers without touching models or disk: the cheapest proof the server is up. */
  async health(signal: AbortSignal): Promise<void> {
    const version = await this.http.json<OllamaVersion>('GET', '/api/version', undefined, signal);
    if (typeof version?.version !== 'string') this.http.malformed('its version');
  }

  async chat(request: ChatRequest): Promise<ChatResult> {
    // Translated first: a field Ollama cannot honour fails here, before any request.
    const body = chatBody(request, false);
    const answer = await this.http.json<OllamaChatFrame>('POST', '/api/chat', body, request.signal, request.model);
    if (typeof answer?.error === 'string') throw this.reported(answer.error, request.model, true);
    if (answer?.done !== true) this.http.malformed('a chat answer');
    const calls = toolCallsOf(answer);
    if (calls === undefined) this.http.malformed('its tool calls');
    const content = answer.message?.content;
    const result: ChatResult = {
      content: typeof content === 'string' ? content : '',
      finishReason: finishReasonOf(answer, calls.length > 0),
      usage: usageOf(answer),
    };
    if (calls.length > 0) result.toolCalls = calls;
    const logprobs = body.logprobs ? logprobsOf(answer.logprobs) : undefined;
    if (logprobs !== undefined) result.logprobs = choiceLogprobs(logprobs);
    return result;
  }

  async chatStream(request: ChatRequest): Promise<AsyncIterable<ChatBatch>> {
    const body = chatBody(request, true);
    const response = await this.http.send('POST', '/api/chat', body, request.signal, request.model);
    return cancellable(response.body, this.chunks(response.body, request, body.logprobs === true));
  }

  private async *chunks(body: ResponseBody, request: ChatRequest, withLogprobs: boolean): AsyncGenerator<ChatBatch, void, undefined> {
    let done = false;
    // Ollama sends each tool call whole, in one frame: one `tool_call` chunk each, numbered across the answer.
    let calls = 0;
    try {
      for await (const frames of this.frames<OllamaChatFrame>(body)) {
        if (done) continue; // read the rest so the connection stays reusable
        const batch: ChatBatch = [];
        // An error frame fails the stream, but only after the text before it has been handed over.
        let failure: EngineError | undefined;
        for (const frame of frames) {
          if (typeof frame.error === 'string') {
            failure = this.reported(frame.error, request.model, false);
            break;
          }
          const content = frame.message?.content;
          const text = typeof content === 'string' ? content : '';
          // Ollama may send a frame's logprobs before the text they belong to (its parsers buffer text): they go out as they come.
          const logprobs = withLogprobs ? logprobsOf(frame.logprobs) : undefined;
          if (logprobs !== undefined) batch.push({ type: 'delta', content: text, logprobs: choiceLogprobs(logprobs) });
          else if (text !== '') batch.push({ type: 'delta', content: text });
          const frameCalls = toolCallsOf(frame);
          if (frameCalls === undefined) {
            failure = engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} streamed tool calls in an unexpected shape`, {
              retryable: false,
            });
            break;
          }
          for (const call of frameCalls)
            batch.push({ type: 'tool_call', index: calls++, id: call.id, name: call.function.name, arguments: call.function.arguments });
          if (frame.done === true) {
            done = true;
            batch.push({ type: 'end', finishReason: finishReasonOf(frame, calls > 0), usage: usageOf(frame) });
            break;
          }
        }
        if (batch.length > 0) yield batch;
        if (failure) throw failure;
      }
      if (!done)
        throw engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} ended its stream before done`, { retryable: false });
    } catch (err) {
      if (!done) throw streamError(this.http.ctx, err, request.signal);
    } finally {
      release(body);
    }
  }

  async embed(request: EmbedRequest): Promise<number[][]> {
    const answer = await this.http.json<OllamaEmbed>(
      'POST',
      '/api/embed',
      { model: request.model, input: request.input },
      request.signal,
      request.model,
    );
    const vectors = answer?.embeddings;
    if (!Array.isArray(vectors) || vectors.length !== request.input.length || !vectors.every(Array.isArray))
      this.http.malformed('embeddings');
    return vectors;
  }

  /** Relays Ollama's pull progress; an `{"error": …}` frame or a stream without `success` throws. */
  async *pull(request: PullRequest): AsyncIterable<PullProgress> {
    const response = await this.http.send('POST', '/api/pull', { model: request.model, stream: true }, request.signal);
    const body = response.body;
    let succeeded = false;
    try {
      for await (const frames of this.frames<OllamaPullFrame>(body)) {
        for (const frame of frames) {
          if (typeof frame.error === 'string') throw this.pullError(frame.error, request.model);
          if (typeof frame.status !== 'string') continue;
          const progress: PullProgress = { status: frame.status };
          if (typeof frame.digest === 'string') progress.digest = frame.digest;
          if (typeof frame.total === 'number') progress.total = frame.total;
          if (typeof frame.completed === 'number') progress.completed = frame.completed;
          if (frame.status === 'success') succeeded = true;
          yield progress;
        }
      }
      if (!succeeded)
        throw engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} ended the pull of "${request.model}" without success`, {
          retryable: false,
        });
    } catch (err) {
      throw streamError(this.http.ctx, err, request.signal);
    } finally {
      release(body);
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /**
   * Parses the NDJSON body as the caller pulls: the frames each read completed, together.
   * A line that is not JSON fails the stream, after the frames before it.
   */
  private async *frames<T>(body: ResponseBody): AsyncGenerator<T[], void, undefined> {
    const splitter = new LineSplitter();
    const lines: string[] = [];
    let ended = false;
    const iterator = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    while (!ended) {
      const next = await iterator.next();
      if (next.done) {
        splitter.end(lines);
        ended = true;
      } else {
        splitter.push(next.value, lines);
      }
      const frames: T[] = [];
      let malformed = false;
      for (let i = 0; i < lines.length && !malformed; i++) {
        const line = lines[i]!;
        if (line.trim() === '') continue;
        try {
          frames.push(JSON.parse(line) as T);
        } catch {
          malformed = true;
        }
      }
      lines.length = 0;
      if (frames.length > 0) yield frames;
      if (malformed)
        throw engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} sent a stream line that is not JSON`, {
          retryable: false,
        });
    }
  }

  /** Ollama reports a missing model as `model "x" not found, try pulling it first`. */
  private reported(message: string, model: string, beforeOutput: boolean): EngineError {
    if (/not found/i.test(message) && message.includes(model)) {
      return engineError(this.http.ctx, 'model_not_found', `model "${model}" is not available on ${this.http.ctx.label} (${message})`);
    }
    return engineError(this.http.ctx, 'upstream_error', `${this.http.ctx.label} reported an error: ${message}`, {
      retryable: beforeOutput,
    });
  }

  private pullError(message: string, model: string): EngineError {
    const missing = /not found|does not exist|file does not exist/i.test(message);
    return engineError(
      this.http.ctx,
      missing ? 'model_not_found' : 'upstream_error',
      missing
        ? `${this.http.ctx.label} cannot pull "${model}": ${message}`
        : `${this.http.ctx.label} failed to pull "${model}": ${message}`,
      { retryable: false },
    );
  }
}
