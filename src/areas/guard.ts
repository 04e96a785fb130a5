// The services' side of the trust boundary: a request reaches a handler only with
// a valid internal token from the edge. In the single-process default the areas
// run in the gateway's process and still verify it, exactly as a split deployment would.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { verifyInternalToken } from '../gateway/internal-token.js';
import { unauthenticated, notFound, forbidden, AppError } from '../platform/errors.js';
import { isPlatformAdmin, isTenantAdmin, type Principal } from '../platform/identity.js';

export function guardArea(area: FastifyInstance, internalTokenKey: Buffer): void {
  area.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.auth === 'public') return;
    const verified = request.internalToken ? verifyInternalToken(internalTokenKey, request.internalToken) : undefined;
    if (!verified) throw unauthenticated();
    request.principal = verified.principal;
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthenticated();
  return request.principal;
}

/** A signed-in person (not an API key). */
export function requireUser(principal: Principal): Principal {
  if (principal.kind !== 'user') throw forbidden('This action needs a signed-in user; API keys cannot perform it.');
  return principal;
}

/**
 * An administrator acting on `tenantId`: that tenant's admin, or a platform admin.
 * Another tenant's admin gets 404, exactly as if the tenant did not exist.
 */
export function requireTenantAdmin(principal: Principal, tenantId: string): Principal {
  if (principal.kind !== 'user') throw forbidden('Administration needs an administrator access token; API keys cannot perform it.');
  if (isPlatformAdmin(principal)) return principal;
  if (principal.tenantId !== tenantId) throw notFound('Tenant');
  if (!isTenantAdmin(principal)) throw forbidden('This action needs the tenant admin role.');
  return principal;
}

export function requirePlatformAdmin(principal: Principal): Principal {
  if (!isPlatformAdmin(principal)) throw new AppError('FORBIDDEN', 'This action needs the platform admin role.');
  return principal;
}
