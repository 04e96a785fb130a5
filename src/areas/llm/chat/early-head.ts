// No silence before the first token. An engine may take long to answer with its
// headers (Ollama loading a model, a queue in vLLM); proxies and load balancers cut
// a connection that stays idle for 30–60 s. So when the engine has not answered
// within GATEWAY_STREAM_EARLY_HEAD_MS, the 200 event-stream head is committed and
// `:` heartbeats keep the connection alive until it does.
//
// The trade-off: once the head is out, a failure can no longer be an HTTP status.
// The router still fails over between nodes meanwhile (only heartbeats went out),
// but if every node fails, the client gets the in-band error frame and [DONE] with
// a 200, not the 503 it would have had. Failures the router finds before any engine
// is asked (an unknown model, no healthy node) come before the wait starts, so they
// stay plain HTTP problems.
import type { FastifyReply } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import type { ClientWatch } from '../calls/client-watch.js';
import { DONE, frameOf, HEARTBEAT, SseWriter } from '../sse/writer.js';
import { countPromptTokens } from '../tokens/count.js';
import { failureStatus, NO_TOKENS, type ChatCall } from './call.js';
import { toHttpFailure } from './engine-failures.js';
import { errorFrame } from './frames.js';

const SHUTDOWN_MESSAGE = 'The server is shutting down before the model answered. Retry the request.';

export class EarlyHead {
  private timer: NodeJS.Timeout | undefined;
  /** The stream, once its head went out before the engine answered. */
  sse: SseWriter | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly client: ClientWatch,
    private readonly waitMs: number,
    private readonly heartbeatMs: number,
  ) {}

  /** Starts the wait (once: failover attempts do not restart it). 0 turns the early head off. */
  arm(): void {
    if (this.waitMs === 0 || this.timer !== undefined || this.sse) return;
    this.timer = setTimeout(() => this.open(), this.waitMs);
  }

  /** The engine answered or failed: no head goes out early any more. */
  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private open(): void {
    if (this.client.signal.aborted) return;
    // Headers the edge set on the reply (CORS) go out with ours; the reply is ours to write from here.
    const headers = this.reply.getHeaders();
    this.reply.hijack();
    this.sse = new SseWriter(this.reply.raw, this.heartbeatMs);
    this.sse.open(headers);
    // At once, not a heartbeat interval later: Node sends the head with the first
    // body bytes, and some proxies hold a head until body bytes follow it.
    void this.sse.write(HEARTBEAT);
  }

  /**
   * The engine call failed after the head went out: told in band (the error frame
   * and [DONE]), recorded as chat/completions records a failure before the answer.
   */
  async failed(call: ChatCall, model: string, error: unknown): Promise<void> {
    const sse = this.sse as SseWriter;
    if (this.client.gone() || this.client.interrupted()) {
      // As before the head: the engine saw the prompt; what it generated before the abort is unknown.
      const stopped = this.client.interrupted();
      sse.end(stopped ? frameOf(errorFrame(SHUTDOWN_MESSAGE, 'server_shutting_down')) + DONE : '');
      const usage = { promptTokens: await countPromptTokens(call.messages), completionTokens: 0 };
      call.record(model, null, stopped ? 'interrupted' : 'client_closed', usage);
      return;
    }
    // What the HTTP problem would have said (a 503's detail, an engine's 400), now in band.
    const failure = toHttpFailure(error, call.deps.retryAfterSeconds);
    if (!(failure instanceof AppError)) this.reply.log.error({ err: error }, 'engine call failed after the stream head');
    sse.end(frameOf(errorFrame(failure instanceof AppError ? failure.detail : INTERNAL)) + DONE);
    call.record(model, null, failureStatus(failure), NO_TOKENS);
  }
}

const INTERNAL = 'An unexpected error occurred before the model answered. Quote the correlation id when reporting it.';
