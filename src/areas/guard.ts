// The services' side of the trust boundary: a request reaches a handler only with
// a valid internal token from the edge. In the single-process default the areas
// run in the gateway's process and still verify it, exactly as a split deployment would.
// What a verified principal may do is decided by the policies in platform/authorization.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { verifyInternalToken } from '../platform/internal-token.js';
import { unauthenticated } from '../platform/errors.js';
import type { Principal } from '../platform/identity.js';

export function guardArea(area: FastifyInstance, internalTokenKey: Buffer): void {
  area.addHook('preHandler', async (request) => {
    // An unmatched path (a not-found handler of an area, such as SCIM's) serves nothing.
    if (request.routeOptions.config.access === 'public' || request.is404) return;
    const verified = request.internalToken ? verifyInternalToken(internalTokenKey, request.internalToken) : undefined;
    if (!verified) throw unauthenticated();
    // A SCIM token acts on the SCIM routes and nowhere else, and only a SCIM token acts there.
    if ((verified.principal.kind === 'scim') !== (request.routeOptions.config.access === 'scim')) throw unauthenticated();
    request.principal = verified.principal;
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthenticated();
  return request.principal;
}
