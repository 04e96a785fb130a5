// Sends fuzz cases: through node:http (raw paths, any header, bodies byte for byte),
// or straight onto a socket for what node:http will not write. Bodies are read up
// to just past the 64 KiB bound, so a runaway answer costs the fuzz nothing.
import http from 'node:http';
import net from 'node:net';
import type { FuzzCase } from './cases.js';

export const BODY_LIMIT = 64 * 1024;
const TIMEOUT_MS = 20_000;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as read: at most BODY_LIMIT + 1 bytes. */
  body: Buffer;
  /** Its full size, where known (Content-Length), else the bytes read. */
  size: number;
  /** The request failed without an answer (reset, timeout). */
  error?: string;
}

export function send(target: { host: string; port: number; agent: http.Agent }, c: FuzzCase): Promise<Answer> {
  return c.raw ? sendRaw(target, c) : sendHttp(target, c);
}

function sendHttp(target: { host: string; port: number; agent: http.Agent }, c: FuzzCase): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...c.headers };
    if (c.body) headers['content-length'] = c.body.length;
    let req: http.ClientRequest;
    try {
      req = http.request({ host: target.host, port: target.port, method: c.method, path: c.path, headers, agent: target.agent }, (res) => {
        const parts: Buffer[] = [];
        let read = 0;
        const done = (error?: string) => {
          const length = Number(res.headers['content-length']);
          const body = Buffer.concat(parts);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            size: Number.isFinite(length) ? length : read,
            ...(error ? { error } : {}),
          });
        };
        res.on('data', (chunk: Buffer) => {
          parts.push(chunk);
          read += chunk.length;
          if (read > BODY_LIMIT) {
            res.destroy();
            done();
          }
        });
        res.on('end', () => done());
        res.on('error', (error) => done(`response broken: ${error.message}`));
      });
    } catch (error) {
      return resolve({
        status: 0,
        headers: {},
        body: Buffer.alloc(0),
        size: 0,
        error: `node:http refused to send it: ${(error as Error).message}`,
      });
    }
    req.on('error', (error) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), size: 0, error: `no answer: ${error.message}` }));
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    if (c.chunks) {
      for (const chunk of c.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(c.body);
    }
  });
}

/**
 * Writes the bytes and parses whatever comes back before the server closes (the raw
 * requests ask it to). The socket is not half-closed: Node drops a request whose
 * client ends its side before the answer, and that would say nothing about the gateway.
 */
function sendRaw(target: { host: string; port: number }, c: FuzzCase): Promise<Answer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const socket = net.connect({ host: target.host, port: target.port }, () => socket.write(c.raw!(`${target.host}:${target.port}`)));
    const timer = setTimeout(() => socket.destroy(new Error(`no close within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    let failure: string | undefined;
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    socket.on('error', (error) => (failure = error.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const answer = parseResponse(Buffer.concat(parts));
      resolve(
        answer ?? { status: 0, headers: {}, body: Buffer.alloc(0), size: 0, error: `no HTTP answer${failure ? `: ${failure}` : ''}` },
      );
    });
  });
}

/** The first response in `data`: status, headers, and the body (de-chunked). */
function parseResponse(data: Buffer): Answer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  let body = data.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body: body.subarray(0, BODY_LIMIT + 1), size: body.length };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}
