// The event stream of a run answered to its client (the persisted chat, the
// Responses API): opened only once an engine accepted the request, so that a run
// that fails before that is still an HTTP answer with its status.
import type { FastifyReply } from 'fastify';
import { shuttingDown } from '../../../platform/errors.js';
import type { ClientWatch } from '../calls/client-watch.js';
import { SseWriter } from '../sse/writer.js';
import type { Outcome } from './executor.js';

export class RunStream {
  /** The stream, once opened. */
  sse: SseWriter | undefined;

  /** `head`: what the stream sends first (a metadata frame, a created event). */
  constructor(
    private readonly reply: FastifyReply,
    private readonly client: ClientWatch,
    private readonly heartbeatMs: number,
    private readonly head: (sse: SseWriter) => Promise<void>,
  ) {}

  /** Opens the stream (the run's onAccepted); does nothing when it is open or the client gone. */
  readonly open = (): Promise<void> | undefined => {
    if (this.sse || this.client.signal.aborted) return undefined;
    // Headers the edge set on the reply (CORS) go out with ours; the reply is ours to write from here.
    const headers = this.reply.getHeaders();
    this.reply.hijack();
    this.sse = new SseWriter(this.reply.raw, this.heartbeatMs);
    this.sse.open(headers);
    return this.head(this.sse);
  };

  /**
   * After the run: the stream to end with the run's last frames, or undefined when
   * nobody is there to read them (the stream is then ended). A run that never opened
   * its stream throws `failureBeforeAnswer` (or the shutdown's 503) as an HTTP
   * answer, or opens it now.
   */
  async settle(outcome: Outcome, failureBeforeAnswer: () => unknown): Promise<SseWriter | undefined> {
    if (!this.sse) {
      if (this.client.gone()) {
        this.reply.hijack();
        return undefined;
      }
      const failure = failureBeforeAnswer() ?? (this.client.interrupted() ? shuttingDown() : undefined);
      if (failure) throw failure;
      await this.open();
    }
    const sse = this.sse;
    if (!sse || outcome.stopped === 'client_gone') {
      sse?.end();
      return undefined;
    }
    return sse;
  }
}
