// Where the llm area applies rate limits: before the handler of every route that
// reaches a model, after the guard has verified the caller. Routes that do not reach
// a model get no hook at all; a model route whose caller has no limits pays one
// property check and the tenant lookup the router has cached anyway.
//
// Admitted: the X-RateLimit-* headers go on the reply (a stream's head copies them).
// Refused: 429 with Retry-After and the same headers. A request answered with an
// error before any usage was recorded releases its reservation when its response
// closes; the others are settled by their usage record (RateLimiter.recorded).
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Principal } from '../../../platform/identity.js';
import type { Limits } from '../../../platform/rate-limits/limits.js';
import { RateLimiter } from './limiter.js';

/** The spec's max_tokens default (section 8): what a request that names no maximum reserves for its answer. */
const DEFAULT_MAX_TOKENS = 1024;

/**
 * The routes that reach a model: whether they generate (embeddings and rerank only read their
 * input), and whether the engine may see more than the body (a kept history, retrieved
 * sources): the persisted chat, thread runs, and a response continuing a conversation.
 */
const METERED: Record<string, { generates: boolean; keepsHistory?: (body: Record<string, unknown>) => boolean }> = {
  'POST /chat/completions': { generates: true },
  'POST /completions': { generates: true },
  'POST /embeddings': { generates: false },
  'POST /rerank': { generates: false },
  'POST /responses': { generates: true, keepsHistory: (b) => b.previous_response_id != null || b.conversation != null },
  'POST /chat': { generates: true, keepsHistory: () => true },
  'POST /threads/:threadId/runs': { generates: true, keepsHistory: () => true },
  'POST /threads/:threadId/runs/stream': { generates: true, keepsHistory: () => true },
  'POST /threads/runs': { generates: true, keepsHistory: () => true },
};

export interface RateLimitHookDeps {
  limiter: RateLimiter;
  /** The tenant's limits from the cached tenant settings (null: none). */
  tenantLimits(tenantId: string): Limits | null | Promise<Limits | null>;
  /**
   * GATEWAY_RAG_CONTEXT_TOKENS: a kept history and its sources are trimmed so that they
   * and the answer fit it, so it bounds what such a request can use whatever its body.
   */
  contextTokens: number;
}

/** Call before the area's routes are registered: hooks the metered ones as they are added. */
export function applyRateLimits(app: FastifyInstance, deps: RateLimitHookDeps): void {
  const check = async (
    request: FastifyRequest,
    reply: FastifyReply,
    principal: Principal,
    tenantLimits: Limits | null,
    metered: (typeof METERED)[string],
  ) => {
    const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
    let reservation = reservationFor(body, metered.generates);
    if (metered.keepsHistory?.(body)) reservation = Math.max(reservation, deps.contextTokens);
    const decision = await deps.limiter.admit(principal, tenantLimits, reservation, String(request.id));
    reply.headers(decision.headers);
    if (!decision.admitted) throw decision.error;
    const { ticket } = decision;
    // Usage recorded settles the ticket; an error answered before the engine was reached
    // (404, 400, 503…) records none: the reservation goes back when the response is done.
    reply.raw.once('close', () => {
      if (!ticket.settled && reply.raw.statusCode >= 400) deps.limiter.release(ticket);
    });
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const metered = METERED[`${methods[0]} ${route.url.slice(route.prefix.length)}`];
    if (!metered) return;
    // Callback style, so a caller without limits costs no promise: a property check and a cached lookup.
    const admit: preHandlerHookHandler = (request, reply, done) => {
      const principal = request.principal;
      if (!principal) return done();
      const tenantLimits = deps.tenantLimits(principal.tenantId);
      if (!(tenantLimits instanceof Promise) && !RateLimiter.applies(principal, tenantLimits)) return done();
      void Promise.resolve(tenantLimits)
        .then((limits) => (RateLimiter.applies(principal, limits) ? check(request, reply, principal, limits, metered) : undefined))
        .then(() => done(), done);
    };
    route.preHandler = [...asList(route.preHandler), admit];
  });
}

const asList = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

/**
 * The most tokens a request can use, reserved against budgets until it ends: its
 * input's JSON length / 3 (an over-estimate of its tokens for ordinary text) plus
 * its maximum output (max_tokens, max_completion_tokens or max_output_tokens, else
 * the spec's default). Requests with a kept history reserve at least the context
 * window (see METERED), which bounds what the body does not show.
 */
export function reservationFor(body: unknown, generates: boolean): number {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const input = b.messages ?? b.prompt ?? b.input ?? b.message ?? b.additional_messages ?? b.thread ?? '';
  const prompt = Math.ceil((JSON.stringify(input)?.length ?? 0) / 3);
  if (!generates) return Math.max(1, prompt);
  const max = [b.max_tokens, b.max_completion_tokens, b.max_output_tokens].find((v) => typeof v === 'number' && v > 0) as
    | number
    | undefined;
  return prompt + (max ?? DEFAULT_MAX_TOKENS);
}
