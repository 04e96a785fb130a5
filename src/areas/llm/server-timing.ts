// The gateway's own overhead, per request, in the Server-Timing header (W3C Server
// Timing; browsers' dev tools and curl -v show it) of chat/completions and the
// legacy completions, and, for chat/completions, in /metrics'
// gateway_overhead_seconds. Times are milliseconds with two decimals.
//
// JSON answers:  `gateway;dur=G, engine;dur=E`
//   E: from the first engine attempt to the engine's whole answer (failed attempts and
//      failover included): what the engine cost. An unstreamed answer's first byte
//      comes when generation ends, so E is also its time to first byte.
//   G: from the request being routed (Fastify's start: auth, body validation,
//      retrieval, usage counting, building the answer) to the answer being handed
//      to Fastify, minus E. Serialising and writing the answer (a few µs) is after.
// Streams:       `gateway;dur=G, engine-ttfb;dur=T`
//   T: from the first engine attempt to the engine accepting the stream (its response
//      head or first frame): the engine's time to first byte.
//   G: from the request being routed to this head going out, minus T. The relaying
//      of frames afterwards is not in it (it overlaps the engine's generation).
//   A stream whose head went out early, before the engine answered
//   (GATEWAY_STREAM_EARLY_HEAD_MS), has no Server-Timing: nothing was known yet.
//
// The values come from clocks the request reads anyway: Fastify's start of the
// request (reply.elapsedTime, which the access log reads too) and the router's
// timing of its engine attempts (Lease.engineMs).
import type { FastifyReply } from 'fastify';
import type { LlmObserver } from './observer.js';

export const SERVER_TIMING = 'server-timing';

/**
 * The header value for a request whose engine took `engineMs` (see above); the
 * gateway's share is observed for /metrics when an observer is present.
 */
export function serverTiming(
  reply: FastifyReply,
  engineMs: number,
  stream: boolean,
  observer: Pick<LlmObserver, 'gatewayOverhead'> | undefined,
): string {
  const gatewayMs = Math.max(0, reply.elapsedTime - engineMs);
  observer?.gatewayOverhead(stream, gatewayMs);
  return `gateway;dur=${gatewayMs.toFixed(2)}, ${stream ? 'engine-ttfb' : 'engine'};dur=${engineMs.toFixed(2)}`;
}
