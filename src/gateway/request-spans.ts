// The edge's part in traces (platform/tracing.ts): the HTTP server span of each request
// is named after its route and carries the correlation id, and once the credential is
// verified, the tenant. Nothing is registered when tracing is off.
import type { FastifyInstance } from 'fastify';
import { requestSpans } from '../platform/tracing.js';

export const CORRELATION_ATTRIBUTE = 'gateway.correlation_id';
export const TENANT_ATTRIBUTE = 'gateway.tenant_id';

/** On the edge: correlation id and route, for every request (404s and refusals included). */
export function markRequestSpans(app: FastifyInstance): void {
  const spanOf = requestSpans();
  if (!spanOf) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const span = spanOf();
    if (span) {
      span.setAttribute(CORRELATION_ATTRIBUTE, String(request.id));
      // The template, never the path: ids in paths would make every span name unique.
      const route = request.routeOptions.url;
      if (route) {
        span.setAttribute('http.route', route);
        span.updateName(`${request.method} ${route}`);
      }
    }
    done();
  });
}

/** In the areas, after the guard has verified the principal: the tenant it acts for. */
export function markTenantOnSpans(areas: FastifyInstance): void {
  const spanOf = requestSpans();
  if (!spanOf) return;
  areas.addHook('preHandler', (request, _reply, done) => {
    if (request.principal) spanOf()?.setAttribute(TENANT_ATTRIBUTE, request.principal.tenantId);
    done();
  });
}
