// The refresh token as an httpOnly cookie for browser clients (spec 2.4, 5.2).
// Path /api/auth keeps it off every other request; SameSite=Strict keeps it off
// cross-site requests; Secure always, since production sits behind TLS even when
// this process serves plain HTTP behind a terminating proxy.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';

export const REFRESH_COOKIE = 'service_refresh_token';

const ATTRIBUTES: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'strict', path: '/api/auth' };

export function setRefreshCookie(reply: FastifyReply, refreshToken: string, ttlDays: number): void {
  reply.setCookie(REFRESH_COOKIE, refreshToken, { ...ATTRIBUTES, maxAge: ttlDays * 86_400 });
}

export function clearRefreshCookie(reply: FastifyReply): void {
  reply.clearCookie(REFRESH_COOKIE, ATTRIBUTES);
}

/** The body's `refreshToken` wins; the cookie is read only when the body has none. */
export function presentedRefreshToken(request: FastifyRequest, fromBody: string | undefined): string | undefined {
  return fromBody ?? request.cookies[REFRESH_COOKIE] ?? undefined;
}
