// A call that generates nothing (embeddings, rerank): its usage, one row per request,
// input tokens only, timed from the request's start, and how it ends when the engine
// work throws. The two routes differ in what they ask the engine, not in these.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { shuttingDown } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { ClientWatch } from '../calls/client-watch.js';
import type { UsageRecorder } from './recorder.js';

export type RecordCall = (model: string, nodeId: string | null, status: string, promptTokens: number) => void;

export function unaryCallRecorder(usage: UsageRecorder, request: FastifyRequest, principal: Principal, endpoint: string): RecordCall {
  const started = performance.now();
  return (model, nodeId, status, promptTokens) =>
    usage.record({
      tenantId: principal.tenantId,
      principalKind: principal.kind,
      principalId: principal.subject,
      customerId: principal.customerId,
      endpoint,
      model,
      nodeId,
      stream: false,
      promptTokens,
      completionTokens: 0,
      latencyMs: performance.now() - started,
      status,
      correlationId: String(request.id),
    });
}

/**
 * A unary call whose engine work threw: a client that left gets nothing (the reply is
 * hijacked and returned), a stopping server a 503, anything else `toFailure`'s HTTP
 * error; each recorded with the status it ends in.
 */
export function failedUnaryCall(
  error: unknown,
  call: { client: ClientWatch; reply: FastifyReply; record: RecordCall; model: string },
  toFailure: (error: unknown) => unknown,
): FastifyReply {
  const { client, reply, record, model } = call;
  if (client.gone()) {
    record(model, null, 'client_closed', 0);
    reply.hijack();
    return reply;
  }
  if (client.interrupted()) {
    record(model, null, 'interrupted', 0);
    throw shuttingDown();
  }
  const failure = toFailure(error);
  record(model, null, (failure as { status?: number }).status === 503 ? 'unavailable' : 'engine_error', 0);
  throw failure;
}
