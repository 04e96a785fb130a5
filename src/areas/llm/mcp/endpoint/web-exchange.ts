// The SDK's handler speaks web-standard Request/Response; Fastify speaks Node's.
// These two functions carry one exchange across, keeping the caller's credentials
// on our side of it: the SDK never sees Authorization, X-API-Key or Cookie, so no
// code past this point could forward them.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

const HELD_BACK = new Set(['authorization', 'x-api-key', 'cookie', 'host', 'content-length', 'connection', 'transfer-encoding']);

/** The request as the SDK reads it; `signal` aborts when the client goes away (2026-07-28: a closed stream cancels). */
export function toWebRequest(request: FastifyRequest, body: Buffer, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HELD_BACK.has(name)) continue;
    for (const one of [value].flat()) headers.append(name, one);
  }
  return new Request(`http://gateway${request.url}`, { method: request.method, headers, body: new Uint8Array(body), signal });
}

/** Sends the SDK's answer through Fastify (so the edge's hooks, CORS and access log see it), streaming event streams as they come. */
export function sendWebResponse(reply: FastifyReply, response: Response): FastifyReply {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // Proxies in front must pass each event at once (the 2026-07-28 transport asks for it).
    reply.header('x-accel-buffering', 'no');
  }
  if (!response.body) return reply.send();
  return reply.send(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream));
}
