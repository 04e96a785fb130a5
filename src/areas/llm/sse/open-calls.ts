// The model calls in flight (chat answers, event streams, pulls), so that a server
// shutting down can end them cleanly instead of cutting connections: new requests
// are already refused, calls still running after the grace period are stopped (the
// engine's work cancelled, a stream ended with an in-band error frame and [DONE],
// a JSON answer turned into a 503), and each one's connection closes once its
// response is out, so the server's close does not wait on idle keep-alive sockets.
import type { ServerResponse } from 'node:http';
import { watchClient, type ClientWatch } from './client.js';

export class OpenCalls {
  private readonly open = new Map<ClientWatch, ServerResponse>();
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private drainWaiters: (() => void)[] = [];

  /** Watches the call's client (see watchClient), registered until `dispose`. */
  watch(res: ServerResponse): ClientWatch {
    const client = watchClient(res);
    if (this.stopping) {
      // Arrived while stopping (an engine call begun before the close): stopped at once.
      closeAfterResponse(res);
      client.interrupt();
      return client;
    }
    this.open.set(client, res);
    const dispose = client.dispose;
    return Object.assign(client, {
      dispose: () => {
        this.open.delete(client);
        dispose();
        if (this.open.size > 0) return;
        if (this.stopping) clearTimeout(this.timer);
        for (const resolve of this.drainWaiters.splice(0)) resolve();
      },
    });
  }

  /** Calls still open now (tests, and the operator's log at shutdown). */
  get size(): number {
    return this.open.size;
  }

  /**
   * The server is closing: every call's connection ends with its response, and the
   * calls still running after `graceMs` are interrupted.
   */
  stop(graceMs: number): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const res of this.open.values()) closeAfterResponse(res);
    this.timer = setTimeout(() => this.interruptAll(), graceMs);
    this.timer.unref();
  }

  /** Interrupts every open call now. */
  interruptAll(): void {
    clearTimeout(this.timer);
    for (const client of this.open.keys()) client.interrupt();
  }

  /**
   * Resolves when every call has finished its work, usage recorded included: a
   * stream's handler goes on after its response has ended, and the server's close
   * waits only for connections.
   */
  drained(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}

function closeAfterResponse(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (res.writableFinished) socket.end();
  else res.once('finish', () => socket.end());
}
