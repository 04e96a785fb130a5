// Usage of a call that generates nothing (embeddings, rerank): one row per request,
// input tokens only, timed from the request's start. The two routes differ in what
// they ask the engine, not in what they record.
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../../platform/identity.js';
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
