// The model calls in flight (chat answers, event streams, pulls), so that a server
// shutting down can end them cleanly instead of cutting connections: new requests
// are already refused, calls still running after the grace period are stopped (the
// engine's work cancelled, a stream ended with an in-band error frame and [DONE],
// a JSON answer turned into a 503), and each connection closes once its response
// is out, so the server's close does not wait on idle keep-alive sockets.
//
// Calls are counted, not collected: the server's connections are followed instead
// (one entry per connection, not per request), and each connection's current
// response is told to stop through an event on the response (see watchClient).
import type { Server as HttpServer, ServerResponse } from 'node:http';
import { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { INTERRUPT, watchClient, type ClientWatch } from './client-watch.js';

export class OpenCalls {
  private open = 0;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private drainWaiters: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly finished = () => {
    if (--this.open > 0) return;
    if (this.stopping) clearTimeout(this.timer);
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  };

  /** Follows the server's connections (TLS ones once their handshake is done: the HTTP layer's socket). */
  attach(server: HttpServer | HttpsServer): void {
    server.on(server instanceof HttpsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Watches the call's client (see watchClient), counted until `dispose`. */
  watch(res: ServerResponse): ClientWatch {
    this.open++;
    const client = watchClient(res, this.finished);
    if (this.stopping) {
      // Arrived while stopping (an engine call begun before the close): stopped at once.
      closeAfterResponse(res);
      client.interrupt();
    }
    return client;
  }

  /** Calls still open now. */
  get size(): number {
    return this.open;
  }

  /**
   * The server is closing: every connection ends with its current response, and the
   * calls still running after `graceMs` are interrupted.
   */
  stop(graceMs: number): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const res of this.responses()) closeAfterResponse(res);
    // A connection that never sent a byte is not idle to Node (it is awaiting its first
    // request), so the server's close would wait on it until a timeout: nothing is lost ending it.
    for (const socket of this.sockets) if (socket.bytesRead === 0) socket.destroy();
    this.timer = setTimeout(() => this.interruptAll(), graceMs);
    this.timer.unref();
  }

  private interruptAll(): void {
    clearTimeout(this.timer);
    for (const res of this.responses()) res.emit(INTERRUPT);
  }

  /**
   * Resolves when every call has finished its work, usage recorded included: a
   * stream's handler goes on after its response has ended, and the server's close
   * waits only for connections.
   */
  drained(): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Each connection's response in progress: Node keeps it on the socket as `_httpMessage`. */
  private *responses(): Iterable<ServerResponse> {
    for (const socket of this.sockets) {
      const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (res) yield res;
    }
  }
}

function closeAfterResponse(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (res.writableFinished) socket.end();
  else res.once('finish', () => socket.end());
}
