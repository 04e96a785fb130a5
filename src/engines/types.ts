// The one interface every model-serving engine speaks to the gateway. An engine
// adapter wraps one compute node (one base URL, or the local llama.cpp child);
// the router in src/areas/llm/router picks which adapter serves a request.
import type { LookupFunction } from 'node:net';

export type EngineKind = 'openai' | 'ollama' | 'local';
export const ENGINE_KINDS: readonly EngineKind[] = ['openai', 'ollama', 'local'];

import type { ChatMessage, ChatOptions, ToolCall } from './chat-fields.js';

export type {
  ChatMessage,
  ChatOptions,
  ChatRole,
  ContentPart,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  ResponseFormat,
} from './chat-fields.js';
export { textOf } from './chat-fields.js';

export interface ChatRequest {
  /** The engine's own model id (what its model list returned). */
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  temperature: number;
  /** Everything else the client asked for (tools, response_format, sampling fields…); absent: nothing more. */
  options?: ChatOptions;
  /** Aborted when the client goes away: the adapter must cancel the upstream work. */
  signal: AbortSignal;
}

/** Token counts. `undefined` fields mean the engine did not report them. */
export interface EngineUsage {
  promptTokens?: number;
  completionTokens?: number;
}

/** Why generation stopped, as the engine reported it (OpenAI's values). */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** One generated choice. */
export interface ChoiceResult {
  /** The text ('' when the model only called tools). */
  content: string;
  finishReason: FinishReason;
  /** The functions the model called, when it did. */
  toolCalls?: ToolCall[];
  /** OpenAI's `logprobs` object of the choice, as the engine gave it (when asked for). */
  logprobs?: unknown;
}

export interface ChatResult extends ChoiceResult {
  usage: EngineUsage;
  /** OpenAI's `system_fingerprint`, when the engine gave one. */
  systemFingerprint?: string;
  /** With `n` > 1: choices 1..n-1 (the first is this result itself). Usage covers all of them. */
  moreChoices?: ChoiceResult[];
}

/**
 * What a chat stream carries: text and tool-call pieces as they are generated, then
 * exactly one `end`. `choice` is the choice's index (absent: 0; only with `n` > 1).
 * A tool call's first piece has its `id` and `name`; later pieces add to `arguments`.
 */
export type ChatChunk =
  | { type: 'delta'; content: string; choice?: number; logprobs?: unknown }
  | { type: 'tool_call'; choice?: number; index: number; id?: string; name?: string; arguments: string }
  | {
      type: 'end';
      /** Choice 0's reason. */
      finishReason: FinishReason;
      usage: EngineUsage;
      /** With `n` > 1: every choice's reason, by index. */
      finishReasons?: FinishReason[];
      systemFingerprint?: string;
    };

/**
 * What a chat stream yields: the chunks that one read of the engine's answer
 * completed, in order, never none. Tokens arrive in bursts (a TCP read, a child's
 * messages): handing them over together lets the consumer write them to its client
 * at once, instead of a round of promises per token.
 */
export type ChatBatch = ChatChunk[];

export interface EngineModel {
  /** Usable as `model` on this engine. */
  id: string;
  /**
   * What the model is for, when the engine can tell (the `local` engine reads a GGUF's
   * pooling type: `rank` is a reranker). Absent: the engine does not say.
   */
  kind?: 'rerank';
  /** Unix seconds, when the engine knows it. */
  created?: number;
  ownedBy?: string;
}

export interface EmbedRequest {
  model: string;
  input: string[];
  /**
   * Inputs as token ids (OpenAI's array-of-token-arrays form), sent instead of `input`
   * (which is then empty). Only the `openai` adapter forwards them; the embeddings
   * endpoint never hands them to another engine.
   */
  tokens?: number[][];
  /** The vectors' length, for models that can shorten them; only the `openai` adapter forwards it. */
  dimensions?: number;
  signal: AbortSignal;
}

/** Scores of `documents` against `query` (a cross-encoder reranker: POST /v1/rerank). */
export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  signal: AbortSignal;
}

export interface RerankResult {
  /** One per document, in the documents' order: the model's relevance score (0..1 for sigmoid rerankers). */
  scores: number[];
  /** The input tokens the engine reported, when it did. */
  promptTokens?: number;
}

/**
 * A legacy text completion (POST /v1/completions): the prompt continued, no roles.
 * Engines with such an endpoint implement Engine.complete; the others are asked
 * through chat (the prompt as one user message) by the gateway.
 */
export interface CompletionRequest {
  model: string;
  /** One or more prompts; the answer has `n` choices per prompt, prompt by prompt. */
  prompt: string[];
  maxTokens: number;
  temperature: number;
  options?: CompletionOptions;
  signal: AbortSignal;
}

/** What a completion may ask for past prompt, max tokens and temperature, under OpenAI's wire names. */
export interface CompletionOptions {
  top_p?: number;
  n?: number;
  stop?: string[];
  seed?: number;
  user?: string;
  echo?: boolean;
  /** Legacy: how many most likely tokens to report per position (0-5). */
  logprobs?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

export interface CompletionChoice {
  text: string;
  finishReason: FinishReason;
  /** The legacy `logprobs` object, as the engine gave it (when asked for). */
  logprobs?: unknown;
}

export interface CompletionResult {
  /** Prompt by prompt, `n` each, in OpenAI's `index` order. */
  choices: CompletionChoice[];
  usage: EngineUsage;
}

export interface PullRequest {
  /** Ollama: the model name to pull. Local: the file name to store it under (`.gguf`). */
  model: string;
  /** Local only: where to download the GGUF file from (http or https). */
  url?: string;
  /** Local only: the expected hex SHA-256 of the file; a mismatch fails the pull and keeps nothing. */
  sha256?: string;
  /**
   * Local only: a stricter rule for this download's addresses than the engine's own
   * (a URL a tenant admin gave), used instead of it for the URL, every redirect hop
   * and every connection.
   */
  guard?: OutboundGuard;
  /**
   * Local only: whether a model of the same name may be replaced (default yes). On an
   * engine other tenants share, a tenant admin's pull may add models but not replace
   * one: the model under that name may be another tenant's.
   */
  replace?: boolean;
  signal: AbortSignal;
}

/** Where outbound requests may go: a check of each URL before it is requested, and the name resolution of every connection. */
export interface OutboundGuard {
  /** Throws to refuse the URL. */
  checkUrl(url: URL): Promise<void>;
  lookup: LookupFunction;
}

/** One pull progress frame; the stream ends with `{status: 'success'}` or throws. */
export interface PullProgress {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

/**
 * Why an engine call failed. `retryable` failures happened before any output and
 * may be tried on another node (connection refused, timeout before headers,
 * 5xx/503); the others are the caller's problem (bad request, unknown model) or
 * happened mid-stream, where nothing is ever retried.
 */
export type EngineFailure =
  | 'unreachable' // connection refused/reset, DNS, TLS: the node is down
  | 'timeout' // no answer (headers or first frame) in time
  | 'overloaded' // 503 / 429 from the engine
  | 'upstream_error' // other 5xx, or a body that is not what the protocol promises
  | 'model_not_found' // the engine does not have (or could not load) the model
  | 'endpoint_missing' // the engine has no such endpoint (a 404 that is not about the model): `options.endpoint` names it
  | 'rejected' // the engine refused the request (4xx other than 404/429)
  | 'conflict' // the engine already holds something else under the name asked for
  | 'download_failed' // a pull's download from the caller's URL failed (refused, DNS, HTTP error, cut off): the source's fault, not the node's
  | 'unsupported' // the engine cannot honour a field of the request; the message (ours, naming the field) goes to the client as a 400
  | 'aborted'; // our caller went away

export interface EngineErrorOptions {
  status?: number;
  retryable?: boolean;
  cause?: unknown;
  /** With `endpoint_missing`: the path the node lacks (`/v1/embeddings`), ours to show the caller. */
  endpoint?: string;
}

export class EngineError extends Error {
  constructor(
    readonly failure: EngineFailure,
    message: string,
    readonly options: EngineErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngineError';
  }

  /** Whether another node may be tried: only for failures before any output. */
  get retryable(): boolean {
    return this.options.retryable ?? ['unreachable', 'timeout', 'overloaded', 'upstream_error'].includes(this.failure);
  }
}

export interface Engine {
  readonly kind: EngineKind;
  /** Models this node can serve now. Throws EngineError when the node is unreachable. */
  listModels(signal: AbortSignal): Promise<EngineModel[]>;
  /** Throws EngineError when the node cannot serve; resolves when it can. */
  health(signal: AbortSignal): Promise<void>;
  chat(request: ChatRequest): Promise<ChatResult>;
  /**
   * Opens a stream. The promise settles once the engine has accepted the request
   * (HTTP status known, model loaded): failures up to then reject with a
   * (possibly retryable) EngineError and nothing has been sent to the client.
   * Failures while iterating are mid-stream: they throw EngineError and are never
   * retried; the chunks read before the failure still come first, in a batch of their own.
   */
  chatStream(request: ChatRequest): Promise<AsyncIterable<ChatBatch>>;
  embed(request: EmbedRequest): Promise<number[][]>;
  /**
   * Reranking, where the engine has it (`openai`: /v1/rerank or /rerank; `local`: a GGUF
   * reranker's ranking context). Absent: the engine cannot rerank (Ollama).
   */
  rerank?(request: RerankRequest): Promise<RerankResult>;
  /** Legacy completions, where the engine has them (`openai`); the gateway maps the others onto chat. */
  complete?(request: CompletionRequest): Promise<CompletionResult>;
  /**
   * The streamed form of `complete`, settling as chatStream does. Text pieces come as
   * `delta` chunks whose `choice` is the OpenAI `index`; `end` carries every choice's
   * reason in `finishReasons`.
   */
  completeStream?(request: CompletionRequest): Promise<AsyncIterable<ChatBatch>>;
  /** Engines that cannot pull models throw EngineError('rejected'). */
  pull(request: PullRequest): AsyncIterable<PullProgress>;
  /** Releases connections (and, for `local`, the child process). */
  close(): Promise<void>;
}

/** How an adapter reaches its node. */
export interface EngineNodeOptions {
  url: string;
  apiKey?: string;
  /** Time allowed for the engine's answer headers (and first frame when streaming). */
  timeoutMs: number;
  /**
   * Resolves host names for each new connection. The gateway passes one that refuses
   * deny-listed addresses, so a name that passed the URL check cannot later be
   * re-pointed (DNS rebinding) at a metadata endpoint.
   */
  lookup?: LookupFunction;
}
