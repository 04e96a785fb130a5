// One legacy completions request, as both answer paths (JSON, event stream) see it:
// its prompts and options as an engine request, how an engine answers it (its own
// completions endpoint where it has one, else chat with the prompt as one user
// message), and its usage record.
import {
  EngineError,
  type ChatBatch,
  type ChatOptions,
  type ChatRequest,
  type ChatResult,
  type CompletionChoice,
  type CompletionOptions,
  type CompletionRequest,
  type CompletionResult,
  type Engine,
} from '../../../engines/types.js';
import type { FastifyReply } from 'fastify';
import { shuttingDown, validation } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { ClientWatch } from '../calls/client-watch.js';
import type { OpenCalls } from '../calls/open-calls.js';
import { toHttpFailure } from '../chat/engine-failures.js';
import type { ModelRouter } from '../router/types.js';
import type { TokenUsage } from '../tokens/count.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { promptTokensOf } from './usage.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, MAX_CHOICES, MAX_PROMPT_CHARS, MAX_PROMPTS, type CompletionBody } from './schemas.js';

export interface CompletionDeps {
  router: Pick<ModelRouter, 'resolveModel' | 'dispatch'>;
  usage: UsageRecorder;
  calls: OpenCalls;
  heartbeatMs: number;
  retryAfterSeconds: number;
}

export const NO_TOKENS: TokenUsage = { promptTokens: 0, completionTokens: 0 };
export const statusOf = (failure: unknown) => ((failure as { status?: number }).status === 503 ? 'unavailable' : 'engine_error');

export class CompletionCall {
  readonly started = performance.now();
  readonly prompts: string[];
  readonly n: number;
  readonly echo: boolean;

  constructor(
    readonly deps: CompletionDeps,
    readonly principal: Principal,
    readonly correlationId: string,
    readonly body: CompletionBody,
  ) {
    this.prompts = promptsOf(body.prompt);
    this.n = body.n ?? 1;
    if (this.prompts.length * this.n > MAX_CHOICES) throw validation('n', `prompts × n must be at most ${MAX_CHOICES}`);
    this.echo = body.echo === true;
  }

  get tenantId(): string {
    return this.principal.tenantId;
  }

  get stream(): boolean {
    return this.body.stream === true;
  }

  engineRequest(model: string, signal: AbortSignal): CompletionRequest {
    const b = this.body;
    const options: CompletionOptions = {
      ...(b.top_p !== undefined ? { top_p: b.top_p } : {}),
      ...(b.n !== undefined ? { n: b.n } : {}),
      ...(b.stop != null ? { stop: typeof b.stop === 'string' ? [b.stop] : b.stop } : {}),
      ...(b.seed !== undefined ? { seed: b.seed } : {}),
      ...(b.user !== undefined ? { user: b.user } : {}),
      ...(b.echo !== undefined ? { echo: b.echo } : {}),
      ...(b.logprobs != null ? { logprobs: b.logprobs } : {}),
      ...(b.presence_penalty !== undefined ? { presence_penalty: b.presence_penalty } : {}),
      ...(b.frequency_penalty !== undefined ? { frequency_penalty: b.frequency_penalty } : {}),
    };
    return {
      model,
      prompt: this.prompts,
      maxTokens: b.max_tokens ?? DEFAULT_MAX_TOKENS,
      temperature: b.temperature ?? DEFAULT_TEMPERATURE,
      ...(Object.keys(options).length > 0 ? { options } : {}),
      signal,
    };
  }

  /** An engine failure before any byte went out: recorded, then the HTTP failure (nothing, when the client has left). */
  async failedBeforeAnswer(model: string, error: unknown, client: ClientWatch, reply: FastifyReply): Promise<void> {
    if (client.gone()) {
      this.record(model, null, 'client_closed', { promptTokens: await promptTokensOf(this.prompts), completionTokens: 0 });
      reply.hijack();
      return;
    }
    if (client.interrupted()) {
      this.record(model, null, 'interrupted', { promptTokens: await promptTokensOf(this.prompts), completionTokens: 0 });
      throw shuttingDown();
    }
    const failure = toHttpFailure(error, this.deps.retryAfterSeconds);
    this.record(model, null, statusOf(failure), NO_TOKENS);
    throw failure;
  }

  record(model: string, nodeId: string | null, status: string, usage: TokenUsage): void {
    this.deps.usage.record({
      tenantId: this.principal.tenantId,
      principalKind: this.principal.kind,
      principalId: this.principal.subject,
      customerId: this.principal.customerId,
      endpoint: 'completions',
      model,
      nodeId,
      stream: this.stream,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      latencyMs: performance.now() - this.started,
      status,
      correlationId: this.correlationId,
    });
  }
}

/** `prompt` as a list of texts; token-id prompts are refused (the gateway routes to engines with different tokenizers). */
function promptsOf(prompt: CompletionBody['prompt']): string[] {
  const list = typeof prompt === 'string' ? [prompt] : prompt;
  if (list.length === 0) throw validation('prompt', 'must not be empty');
  if (list.length > MAX_PROMPTS) throw validation('prompt', `at most ${MAX_PROMPTS} prompts per request`);
  list.forEach((item, i) => {
    const field = typeof prompt === 'string' ? 'prompt' : `prompt[${i}]`;
    if (typeof item !== 'string')
      throw validation(field, 'must be a string: token-id prompts are not accepted, send the text (a string or an array of strings)');
    if (item.length > MAX_PROMPT_CHARS) throw validation(field, `must be at most ${MAX_PROMPT_CHARS} characters`);
    // The text rules (no NUL) apply to every string a request carries; the schema cannot reach these items.
    if (item.includes('\u0000')) throw validation(field, 'must not contain NUL characters');
  });
  return list as string[];
}

// ——— Engines without a completions endpoint: the prompt as one user message of a chat. ———

/** Fields of the legacy surface that chat cannot carry. */
function refuseForChat(engine: Engine, request: CompletionRequest, streaming: boolean): void {
  if (request.options?.logprobs !== undefined)
    throw new EngineError(
      'unsupported',
      `logprobs: the ${engine.kind} engine serving this model has no legacy completions; leave logprobs out`,
    );
  if (streaming && request.prompt.length > 1)
    throw new EngineError(
      'unsupported',
      `prompt: the ${engine.kind} engine serving this model streams one prompt at a time; send one prompt, or leave stream out`,
    );
  if (streaming && (request.options?.n ?? 1) > 1)
    throw new EngineError(
      'unsupported',
      `n: the ${engine.kind} engine serving this model streams one choice at a time; leave n out, or stream`,
    );
}

/** Chats in flight at once for one request (prompts × n of them), so that one request cannot flood its node. */
const CHATS_AT_ONCE = 4;

function chatRequestOf(request: CompletionRequest, prompt: string): ChatRequest {
  const { echo: _echo, logprobs: _logprobs, n: _n, ...rest } = request.options ?? {};
  const options: ChatOptions = rest;
  return {
    model: request.model,
    messages: [{ role: 'user', content: prompt }],
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    ...(Object.keys(options).length > 0 ? { options } : {}),
    signal: request.signal,
  };
}

/** The whole answer: the engine's completions, or one chat per prompt and choice (a few at once, on the same node). */
export async function completeOn(engine: Engine, request: CompletionRequest): Promise<CompletionResult> {
  if (engine.complete) return engine.complete(request);
  refuseForChat(engine, request, false);
  const echo = request.options?.echo === true;
  // `n` as n chats per prompt, OpenAI's order (prompt by prompt): no chat-mapped engine has `n` of its own.
  const n = request.options?.n ?? 1;
  const prompts = request.prompt.flatMap((prompt) => Array.from({ length: n }, () => prompt));
  const results: ChatResult[] = [];
  for (let i = 0; i < prompts.length; i += CHATS_AT_ONCE)
    results.push(...(await Promise.all(prompts.slice(i, i + CHATS_AT_ONCE).map((prompt) => engine.chat(chatRequestOf(request, prompt))))));
  const choices: CompletionChoice[] = [];
  let promptTokens: number | undefined = 0;
  let completionTokens: number | undefined = 0;
  results.forEach((result: ChatResult, i) => {
    choices.push({ text: (echo ? prompts[i]! : '') + result.content, finishReason: result.finishReason });
    // A count is used only when every chat reported it; otherwise the tokenizer counts the whole.
    promptTokens =
      promptTokens !== undefined && result.usage.promptTokens !== undefined ? promptTokens + result.usage.promptTokens : undefined;
    completionTokens =
      completionTokens !== undefined && result.usage.completionTokens !== undefined
        ? completionTokens + result.usage.completionTokens
        : undefined;
  });
  return {
    choices,
    usage: { ...(promptTokens !== undefined ? { promptTokens } : {}), ...(completionTokens !== undefined ? { completionTokens } : {}) },
  };
}

/** The streamed answer: the engine's completions stream, or a chat stream (echo: the prompt first). */
export async function completeStreamOn(engine: Engine, request: CompletionRequest): Promise<AsyncIterable<ChatBatch>> {
  if (engine.completeStream) return engine.completeStream(request);
  refuseForChat(engine, request, true);
  const batches = await engine.chatStream(chatRequestOf(request, request.prompt[0]!));
  if (request.options?.echo !== true) return batches;
  const echoed: ChatBatch = [{ type: 'delta', content: request.prompt[0]! }];
  const inner = batches[Symbol.asyncIterator]();
  let first = true;
  // A plain iterator, not a generator: return() must reach the engine's stream even before the first read.
  const iterator: AsyncIterator<ChatBatch> = {
    next: async () => {
      const result = await inner.next();
      if (!first || result.done) return result;
      first = false;
      return { done: false, value: [...echoed, ...result.value] };
    },
    return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
