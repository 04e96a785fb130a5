// The origin browsers reach the gateway at: GATEWAY_PUBLIC_URL when set (right behind
// any proxy), else the request's scheme and Host (X-Forwarded-Proto/-Host only from a
// trusted proxy, GATEWAY_TRUST_PROXY). What an IdP is told to send browsers back to.
import type { FastifyRequest } from 'fastify';

export function publicOrigin(request: FastifyRequest, config: { sso: { publicUrl: string | undefined } }): string {
  if (config.sso.publicUrl) return config.sso.publicUrl;
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    // No usable Host header: nothing to build on but the listener's own address.
    return `${request.protocol}://localhost`;
  }
}
