// Correlation ids: kept from the client when well-formed, otherwise generated.
// Fastify uses the id as the request id, so it is in every log line of the request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const CORRELATION_HEADER = 'x-correlation-id';
const ACCEPTED = /^[A-Za-z0-9._-]{1,64}$/;

export function correlationIdFor(req: IncomingMessage): string {
  const inbound = req.headers[CORRELATION_HEADER];
  return typeof inbound === 'string' && ACCEPTED.test(inbound) ? inbound : randomUUID();
}
