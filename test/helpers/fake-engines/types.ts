// The public shapes of the fake engines: the knobs a test sets (FakeBehaviour), the
// requests a fake records (FakeRequest) and the handle a test drives (FakeEngine).
// The knobs' meaning is described in index.ts.

export interface FakeBehaviour {
  models?: string[];
  reply?: string;
  status?: number;
  delayHeadersMs?: number;
  /** Holds chat and completion answers before their headers until this promise settles: the test releases them. */
  holdHeaders?: Promise<unknown>;
  silentMs?: number;
  tokenDelayMs?: number;
  dieAfterTokens?: number;
  hang?: boolean;
  noUsage?: boolean;
  /** (openai) The `usage` every answer reports, as given: a misbehaving engine's counts. */
  usage?: unknown;
  repeat?: number;
  pullFrames?: object[];
  /**
   * (openai) The functions to call when a request has `tools` and its last message is
   * not a `tool` result: answered as calls `call_fake_<n>` with content null and
   * finish_reason 'tool_calls' (streamed as OpenAI streams them).
   */
  toolCalls?: { name: string; arguments: string }[];
  /** (openai) With `toolCalls`: call them after a tool result too (a model that never stops calling tools). */
  toolCallsAlways?: boolean;
  /** (openai) The finish_reason every answer reports instead of its own ('content_filter', or garbage). */
  finishReason?: string;
  /**
   * (openai) Paths this server does not have (`/v1/embeddings`, `/v1/completions`):
   * answered as vLLM's FastAPI answers an unknown route, a bare 404 `{"detail":"Not Found"}`.
   */
  lacks?: string[];
  /**
   * (openai) POST /v1/rerank (vLLM's shape) and /rerank (TEI's: `texts`, a bare array of
   * {index, score}) score each document by this rule. Default: the share of the query's
   * words the document holds (0..1).
   */
  rerank?: (query: string, document: string) => number;
  /** (openai) Models the list names but chat and embeddings answer with OpenAI's 404 `model_not_found` (listed, cannot be loaded). */
  unservable?: string[];
}

export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeEngine {
  url: string;
  kind: 'openai' | 'ollama';
  behaviour: FakeBehaviour;
  requests: FakeRequest[];
  chatRequests(): number;
  /** Requests other than the GETs a gateway's periodic health check sends (the model list, the version): what clients' requests caused. */
  workRequests(): number;
  inFlight(): number;
  aborted(): number;
  waitForAbort(count?: number, timeoutMs?: number): Promise<void>;
  bytesWritten(): number;
  /**
   * Resolves with bytesWritten() once it has held still for `quietMs`: the fake writes
   * with backpressure, so it holds still when every buffer towards a stalled reader is
   * full (or when its answer is done: a test bounds the count to tell the two apart).
   * How long that takes depends on the machine's load, so tests wait for it rather
   * than sleep a fixed time. Fails after `timeoutMs` if the writes never stop.
   */
  untilStalled(quietMs?: number, timeoutMs?: number): Promise<number>;
  /** TCP connections accepted so far: keep-alive reuse shows as fewer connections than requests. */
  connections(): number;
  close(): Promise<void>;
}
