// One chat/completions request as both answer paths (JSON and event stream) see it:
// who asked, what was asked (defaults applied), and how its usage is recorded.
import type { FastifyReply } from 'fastify';
import type { ChatOptionName } from '../../../engines/chat-fields.js';
import type { ChatMessage, ChatOptions, ChatRequest } from '../../../engines/types.js';
import { AppError, shuttingDown } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { ModelRouter } from '../router/types.js';
import type { ClientWatch } from '../calls/client-watch.js';
import type { OpenCalls } from '../calls/open-calls.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { countPromptTokens, type TokenUsage } from '../tokens/count.js';
import { toHttpFailure } from './engine-failures.js';
import { ground, UNGROUNDED, wantsGrounding, type Grounding, type GroundingDeps } from '../grounding/ground.js';
import { checkChatBody } from './body-rules.js';
import type { LlmObserver } from '../observer.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, type ChatBodyMessage, type ChatCompletionBody } from './schemas.js';

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
  /** /metrics: overhead, time to first token, active streams; undefined when metrics are off. */
  observer?: LlmObserver | undefined;
}

export class ChatCall {
  /** performance.now() when the handler started; usage latency counts from here. */
  readonly started = performance.now();
  messages: ChatMessage[];
  grounding: Grounding = UNGROUNDED;
  readonly maxTokens: number;
  readonly temperature: number;
  /** What else the client asked of the generation (absent: nothing), under OpenAI's names. */
  readonly options: ChatOptions | undefined;

  constructor(
    readonly deps: ChatDeps,
    readonly principal: Principal,
    readonly correlationId: string,
    readonly body: ChatCompletionBody,
  ) {
    // What the schema cannot say (a 400 naming the field), before any work is done.
    checkChatBody(body);
    this.messages = body.messages.map(engineMessage);
    this.maxTokens = body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX_TOKENS;
    this.temperature = body.temperature ?? DEFAULT_TEMPERATURE;
    this.options = optionsOf(body);
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
    const { messages, maxTokens, temperature, options } = this;
    return options ? { model, messages, maxTokens, temperature, options, signal } : { model, messages, maxTokens, temperature, signal };
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

/**
 * A client's message as the engine gets it: the fields OpenAI defines, picked one by
 * one (anything else a client sent in a message is not ours to forward). Content
 * parts and tool calls are the client's own arrays, validated, not copied.
 */
function engineMessage(m: ChatBodyMessage): ChatMessage {
  const message: ChatMessage = { role: m.role, content: (m.content ?? null) as ChatMessage['content'] };
  if (m.name !== undefined) message.name = m.name;
  if (m.tool_calls !== undefined && m.tool_calls.length > 0) message.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) message.tool_call_id = m.tool_call_id;
  return message;
}

/** Every generation option a client may send, by its wire name (the `satisfies` keeps the list and ChatOptions in step). */
const OPTION_NAMES = [
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'stop',
  'top_p',
  'seed',
  'n',
  'user',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'metadata',
] as const satisfies readonly ChatOptionName[];
type Missing = Exclude<ChatOptionName, (typeof OPTION_NAMES)[number]>;
const _everyOptionListed: Missing extends never ? true : Missing = true;
void _everyOptionListed;

/** The options the client sent, as sent (only those present; values referenced, not copied); undefined when none. */
function optionsOf(body: ChatCompletionBody): ChatOptions | undefined {
  let options: Record<string, unknown> | undefined;
  for (const name of OPTION_NAMES) {
    const value = body[name];
    if (value === undefined) continue;
    options ??= {};
    options[name] = value;
  }
  // One stop sequence or several: engines get the list.
  if (typeof body.stop === 'string') options!.stop = [body.stop];
  return options as ChatOptions | undefined;
}
