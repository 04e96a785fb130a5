// CSRF on the routes the refresh cookie authorises by itself (refresh, logout). The
// cookie is SameSite=Strict, so another site's page never gets it sent; these checks are
// the wall behind that one: a sibling subdomain is "same-site" to SameSite, and a
// browser that ignores the attribute must not make the cookie usable from elsewhere.
//
// A browser always sends `Origin` on a POST (and `Sec-Fetch-Site` too, today); a
// server-to-server client sends neither, and keeps working. A client that sends the
// refresh token in its JSON body does not use the cookie at all and is not checked:
// a page on another site cannot read the token to put it there.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';

/** Refuses (403) a request that would use the refresh cookie from a page other than the gateway's own or an allowed origin. */
export function refuseCrossSiteCookieUse(request: FastifyRequest, allowedOrigins: readonly string[]): void {
  const fetchSite = single(request.headers['sec-fetch-site'])?.toLowerCase();
  const origin = single(request.headers.origin);
  if (fetchSite === 'cross-site') throw refused('the browser marks it as coming from another site (Sec-Fetch-Site: cross-site)');
  if (origin === undefined) {
    if (fetchSite === undefined) return; // not a browser
    throw refused('it comes from a browser but has no Origin header');
  }
  if (origin !== ownOrigin(request) && !allowedOrigins.includes(origin))
    throw refused(`it comes from ${JSON.stringify(origin)}, which is neither this gateway's origin nor one in GATEWAY_CORS_ORIGINS`);
}

/**
 * Refuses (415) a body other than JSON: an HTML form can post urlencoded, multipart or
 * text/plain bodies to any site without asking it first, JSON it cannot. No body at all
 * (no Content-Type) is fine: the cookie then carries the token.
 */
export function refuseNonJsonBody(request: FastifyRequest): void {
  if (request.headers['content-type'] === undefined) return;
  if (request.mediaType?.toLowerCase() !== 'application/json')
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the request body as application/json, or send no body (the refresh cookie then carries the token).',
    );
}

/** This gateway's origin as the browser sees it: the request's scheme and Host (X-Forwarded-Proto/-Host from a trusted proxy, GATEWAY_TRUST_PROXY). */
function ownOrigin(request: FastifyRequest): string | undefined {
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return undefined; // no usable Host: no origin matches it
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

function refused(why: string): AppError {
  return new AppError(
    'FORBIDDEN',
    `The refresh cookie is accepted only from this gateway's own pages, and this request was refused because ${why}. ` +
      'Clients that are not browsers can send the refresh token in the JSON body instead.',
  );
}
