// A server-sent-event response written straight to the socket (the reply is
// hijacked): frames as `data: …`, `: keep-alive` comments while the producer is
// silent, and backpressure — a frame the socket cannot take yet makes `send` wait
// for 'drain', so a slow reader stalls the producer instead of growing memory.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  // Tells nginx-style proxies not to buffer the stream (spec 6.1).
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

export const HEARTBEAT = ': keep-alive\n\n';
export const DONE = 'data: [DONE]\n\n';

/** One `data:` frame holding `value` as JSON. */
export const frameOf = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

export class SseWriter {
  private heartbeat: NodeJS.Timeout | undefined;
  private finished = false;
  /** Frames written in this turn, not yet handed to the response. */
  private pending = '';
  private flushScheduled = false;
  private draining: Promise<void> | undefined;
  private readonly flush = () => {
    this.flushScheduled = false;
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    if (this.writable) this.res.write(text);
  };

  /** `heartbeatMs`: a comment goes out after this long without any other write. */
  constructor(
    private readonly res: ServerResponse,
    private readonly heartbeatMs: number,
  ) {
    // Nothing (heartbeat included) may be written once the connection is gone.
    res.once('close', () => this.stopHeartbeat());
  }

  /**
   * Sends the 200 status line with the event-stream headers. `headers` carries what
   * the edge put on the reply (CORS); the correlation id is already on the raw response.
   * The event-stream headers are added to `headers` itself (no copy per stream): pass
   * an object of your own, as reply.getHeaders() returns.
   */
  open(headers: Record<string, number | string | string[] | undefined> = {}): void {
    this.res.writeHead(200, Object.assign(headers, SSE_HEADERS) as OutgoingHttpHeaders);
    // No Nagle delay between small frames: each token reaches the client as it is written.
    this.res.socket?.setNoDelay(true);
    this.heartbeat = setTimeout(() => this.beat(), this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Whether frames can still be written (the client is there and `end` was not called). */
  get writable(): boolean {
    return !this.finished && !this.res.destroyed && this.res.writable;
  }

  /** One `data:` frame holding `frame` as JSON; resolves once the socket can take more. */
  send(frame: unknown): Promise<void> {
    return this.write(frameOf(frame));
  }

  /** One `data:` frame of JSON text serialized by the caller. */
  sendJson(json: string): Promise<void> {
    return this.write(`data: ${json}\n\n`);
  }

  /**
   * Raw event-stream text (e.g. DONE); resolves once the socket can take more.
   * Frames produced in one turn (an engine's TCP read often holds several tokens)
   * are joined and handed to the response once, at the end of the turn: one
   * chunk and one socket write instead of one each. What a turn can add is bounded
   * by what one engine read produced; between turns a full socket makes `write`
   * wait for 'drain', so a slow reader stalls the producer.
   */
  write(text: string): Promise<void> {
    if (!this.writable) return Promise.resolve();
    this.pending += text;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(this.flush);
    }
    this.heartbeat?.refresh();
    return this.res.writableNeedDrain ? this.drained() : Promise.resolve();
  }

  /**
   * Ends the response (idempotent), with whatever frames are still pending and then
   * `last`: the stream's closing frames go out with it, in the same write, without a
   * wait on the socket (they are small and nothing follows them).
   */
  end(last = ''): void {
    this.stopHeartbeat();
    if (this.finished) return;
    const text = this.writable ? this.pending + last : this.pending;
    this.finished = true;
    this.pending = '';
    if (!this.res.destroyed) this.res.end(text);
  }

  private beat(): void {
    // A full socket buffer already tells the client we are alive; never pile comments onto it.
    if (this.writable && !this.res.writableNeedDrain) this.res.write(HEARTBEAT);
    if (this.writable) this.heartbeat?.refresh();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * One wait per full socket, shared by every write made while it is full (a batch
   * of frames): not a promise and two listeners per frame.
   */
  private drained(): Promise<void> {
    this.draining ??= new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        this.draining = undefined;
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
    return this.draining;
  }
}
