// One chat/completions request as both answer paths (JSON and event stream) see it:
// who asked, what was asked (defaults applied), and how its usage is recorded.
import type { ChatMessage, ChatRequest } from '../../../engines/types.js';
import type { Principal } from '../../../platform/identity.js';
import type { ModelRouter } from '../router/types.js';
import type { UsageRecorder } from '../usage/recorder.js';
import type { TokenUsage } from '../tokens/count.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, type ChatCompletionBody } from './schemas.js';

export type UsageStatus = 'ok' | 'client_closed' | 'engine_error' | 'unavailable';

export interface ChatDeps {
  router: ModelRouter;
  usage: UsageRecorder;
  heartbeatMs: number;
  /** Retry-After for 503s the engines cause: the router's view of nodes refreshes this often. */
  retryAfterSeconds: number;
}

export class ChatCall {
  /** performance.now() when the handler started; usage latency counts from here. */
  readonly started = performance.now();
  readonly messages: ChatMessage[];
  readonly maxTokens: number;
  readonly temperature: number;

  constructor(
    readonly deps: ChatDeps,
    readonly principal: Principal,
    readonly correlationId: string,
    readonly body: ChatCompletionBody,
  ) {
    // Only role and content go on: extra message fields a client sent are not ours to forward.
    this.messages = body.messages.map((m) => ({ role: m.role, content: m.content }));
    this.maxTokens = body.max_tokens ?? DEFAULT_MAX_TOKENS;
    this.temperature = body.temperature ?? DEFAULT_TEMPERATURE;
  }

  get tenantId(): string {
    return this.principal.tenantId;
  }

  engineRequest(model: string, signal: AbortSignal): ChatRequest {
    return { model, messages: this.messages, maxTokens: this.maxTokens, temperature: this.temperature, signal };
  }

  /** Queues the usage record (a batched insert later, never a write on the request path). */
  record(model: string, nodeId: string | null, status: UsageStatus, usage: TokenUsage): void {
    this.deps.usage.record({
      tenantId: this.principal.tenantId,
      principalKind: this.principal.kind,
      principalId: this.principal.subject,
      customerId: this.principal.customerId,
      endpoint: 'chat/completions',
      model,
      nodeId,
      stream: this.body.stream === true,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      latencyMs: performance.now() - this.started,
      status,
      correlationId: this.correlationId,
    });
  }
}

export const NO_TOKENS: TokenUsage = { promptTokens: 0, completionTokens: 0 };
