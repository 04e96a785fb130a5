// /api/auth/login, /refresh, /logout and /me. Login, refresh and logout are
// public at the edge: they carry their own credential (password or refresh token).
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { decoyHash } from '../../../platform/passwords.js';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { clearRefreshCookie, presentedRefreshToken, setRefreshCookie } from './cookie.js';
import { refuseCrossSiteCookieUse, refuseNonJsonBody } from './cross-site.js';
import type { SessionDeps } from './deps.js';
import { LoginBody, LoginResponse, LogoutResponse, RefreshBody, SessionResponse, UserSchema } from './schemas.js';
import { publicOrigin } from './origin.js';
import { currentUser, login, logout, refresh } from './service.js';
import { Throttle } from './throttle.js';

export const sessionRoutes: FastifyPluginAsyncTypebox<{ deps: SessionDeps }> = async (app, { deps }) => {
  const ttlDays = deps.config.auth.refreshTokenTtlDays;
  const throttle = new Throttle(deps.failures, 'Too many failed sign-in attempts; try again later.');
  // Computed now, so the first unknown-user login does not take twice as long as a wrong password.
  decoyHash().catch((error: Error) => app.log.error({ err: error }, 'could not prepare the decoy password hash'));

  // A missing body is an empty one, so the body schema still validates what is sent.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method === 'POST') request.body = {};
  });

  app.post(
    '/login',
    { config: { access: 'public' }, schema: { body: LoginBody, response: { 200: LoginResponse, ...problems(400, 401, 429) } } },
    async (request, reply) => {
      const result = await login(deps, throttle, request.body, request.ip, request.headers['user-agent']);
      if ('token' in result) setRefreshCookie(reply, result.refreshToken, ttlDays);
      return result;
    },
  );

  // Refresh and logout act on the cookie alone: JSON bodies only, and the cookie only from our own pages (cross-site.ts).
  const cookieRoute = {
    config: { access: 'public' as const },
    onRequest: async (request: FastifyRequest) => refuseNonJsonBody(request),
  };
  const refuseCrossSite = (request: FastifyRequest, fromBody: string | undefined) => {
    if (fromBody === undefined) refuseCrossSiteCookieUse(request, deps.config.corsOrigins);
  };

  app.post(
    '/refresh',
    { ...cookieRoute, schema: { body: RefreshBody, response: { 200: SessionResponse, ...problems(400, 401, 403, 415) } } },
    async (request, reply) => {
      refuseCrossSite(request, request.body.refreshToken);
      const session = await refresh(deps, presentedRefreshToken(request, request.body.refreshToken), request.log);
      setRefreshCookie(reply, session.refreshToken, ttlDays);
      return session;
    },
  );

  // Logout is idempotent: without a token, or with an unknown one, there is nothing
  // to revoke and it still answers 204 and clears the cookie. A session an SSO sign-in
  // started answers 200 with the IdP's end-session URL, for the browser to visit next.
  app.post(
    '/logout',
    { ...cookieRoute, schema: { body: RefreshBody, response: { 200: LogoutResponse, 204: Type.Null(), ...problems(400, 403, 415) } } },
    async (request, reply) => {
      refuseCrossSite(request, request.body.refreshToken);
      const sessionId = await logout(deps, presentedRefreshToken(request, request.body.refreshToken));
      clearRefreshCookie(reply);
      const endSessionUrl = sessionId ? await deps.auth.ssoHooks.endSessionUrl(sessionId, publicOrigin(request, deps.config)) : undefined;
      if (endSessionUrl) return reply.code(200).send({ endSessionUrl });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/me',
    { config: { access: 'signedIn' }, schema: { response: { 200: UserSchema, ...problems(401, 403, 404) } } },
    async (request) => currentUser(deps, principalOf(request)),
  );
};
