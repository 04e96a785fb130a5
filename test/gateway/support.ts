// Helpers for the edge tests: credentials without the management routes, and raw
// HTTP (fetch normalises `..`, `//` and casing issues away, a raw request does not).
import http from 'node:http';
import net from 'node:net';
import type { Seedable, TestGateway } from '../helpers/gateway.js';
export { tokenFor } from '../helpers/gateway.js';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An active API key for the tenant, issued by the key service exactly as the management route and the CLI do. */
export async function createApiKey(gw: Seedable, tenantId: string, name = 'edge-test'): Promise<{ id: string; key: string }> {
  const { id, key } = await issueApiKey(gw.ctx, tenantId, { name }, null);
  return { id, key };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** One request with the path sent byte for byte as given (no URL normalisation), on its own connection. */
export function rawRequest(
  gw: TestGateway,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[] } = {},
): Promise<RawResponse> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: options.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 10 s`)));
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(options.body);
    }
  });
}

/**
 * Opens a TCP connection, writes `data` and then stays silent, as a slow client would.
 * Resolves with what the server sent and whether it closed the connection, `closed:
 * false` when it was still open after `waitMs` (a deadline against a hang only: the
 * server's own timeout is what a test asserts, through the answer it sent).
 */
export function silentClient(gw: TestGateway, data: string, waitMs: number): Promise<{ received: string; closed: boolean }> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.write(data));
    let received = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ received, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined); // a reset is one way of being cut off
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ received, closed: true });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') reject(error);
    });
  });
}

/** Parses the status line and headers of a raw HTTP/1.1 response. */
export function parseRawResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
