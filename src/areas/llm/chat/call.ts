// One chat/completions request as both answer paths (JSON and event stream) see it:
// who asked, what was asked (defaults applied), and how its usage is recorded.
import type { FastifyReply } from 'fastify';
import type { ChatMessage, ChatRequest } from '../../../engines/types.js';
import { AppError, shuttingDown } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { ModelRouter } from '../router/types.js';
import type { ClientWatch } from '../calls/client-watch.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { countPromptTokens, type TokenUsage } from '../tokens/count.js';
import { toHttpFailure } from './engine-failures.js';
import { ground, UNGROUNDED, wantsGrounding, type Grounding, type GroundingDeps } from '../grounding/ground.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, type ChatCompletionBody } from './schemas.js';

export type UsageStatus = 'ok' | 'client_closed' | 'engine_error' | 'unavailable' | 'interrupted';

export interface ChatDeps {
  router: ModelRouter;
  usage: UsageRecorder;
  /** Counts the call while it runs, so that a shutdown can stop it cleanly. */
  calls: OpenCalls;
  heartbeatMs: number;
  /** How long a stream waits for the engine before its head and heartbeats go out (0: until the engine answers). */
  earlyHeadMs: number;
  /** Retry-After for 503s the engines cause: the router's view of nodes refreshes this often. */
  retryAfterSeconds: number;
  /** Retrieval from the tenant's documents, for requests with grounding fields. */
  grounding: GroundingDeps;
}

export class ChatCall {
  /** performance.now() when the handler started; usage latency counts from here. */
  readonly started = performance.now();
  messages: ChatMessage[];
  grounding: Grounding = UNGROUNDED;
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

  /** Whether the request has a grounding field: only then is ground() called (no await on the ungrounded path). */
  get wantsGrounding(): boolean {
    return wantsGrounding(this.body);
  }

  /**
   * Retrieves, and the engine sees the sources with the conversation. Throws
   * retrieval's 404 for an id that is not the tenant's.
   */
  async ground(): Promise<void> {
    const grounded = await ground(this.deps.grounding, this.tenantId, this.body, this.messages, this.maxTokens);
    this.grounding = grounded.grounding;
    this.messages = grounded.messages;
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

  /**
   * The engine call failed before any byte went to the client (both answer paths):
   * recorded, then the HTTP failure is thrown, or, when the client has already
   * left, nothing is sent (the reply is hijacked: nobody is there to read it).
   */
  async failedBeforeAnswer(model: string, error: unknown, client: ClientWatch, reply: FastifyReply): Promise<void> {
    if (client.gone()) {
      // The engine saw the prompt; what it generated before the abort is unknown.
      this.record(model, null, 'client_closed', { promptTokens: await countPromptTokens(this.messages), completionTokens: 0 });
      reply.hijack();
      return;
    }
    if (client.interrupted()) {
      this.record(model, null, 'interrupted', { promptTokens: await countPromptTokens(this.messages), completionTokens: 0 });
      throw shuttingDown();
    }
    const failure = toHttpFailure(error, this.deps.retryAfterSeconds);
    this.record(model, null, failureStatus(failure), NO_TOKENS);
    throw failure;
  }
}

export const NO_TOKENS: TokenUsage = { promptTokens: 0, completionTokens: 0 };

export function failureStatus(failure: unknown): UsageStatus {
  return failure instanceof AppError && failure.status === 503 ? 'unavailable' : 'engine_error';
}
