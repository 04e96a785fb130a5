// The signed-in person's account: /api/auth/sessions (list, end one), /logout-all
// (sign-out everywhere) and /password. Beside sign-in's routes (routes.ts), not in
// them: these take an access token, sign-in's take a password or a refresh token.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { changePassword, endAllSessions, endSession, listSessions } from './account.js';
import { clearRefreshCookie } from './cookie.js';
import type { SessionDeps } from './deps.js';
import { PasswordChange, SessionList, SessionParams } from './schemas.js';
import { Throttle } from './throttle.js';

export const accountRoutes: FastifyPluginAsyncTypebox<{ deps: SessionDeps }> = async (app, { deps }) => {
  // The same counter as login's throttle: a wrong current password is a failed sign-in.
  const throttle = new Throttle(deps.failures, 'Too many failed sign-in attempts; try again later.');

  app.get(
    '/sessions',
    { config: { access: 'signedIn' }, schema: { response: { 200: SessionList, ...problems(401, 403, 404) } } },
    async (request) => ({ data: await listSessions(deps, principalOf(request)) }),
  );

  app.delete(
    '/sessions/:sessionId',
    { config: { access: 'personal' }, schema: { params: SessionParams, response: { 204: Type.Null(), ...problems(400, 401, 403, 404) } } },
    async (request, reply) => {
      await endSession(deps, principalOf(request), request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  // Every session ends, this one too: the refresh cookie goes with it.
  app.post(
    '/logout-all',
    { config: { access: 'signedIn' }, schema: { response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await endAllSessions(deps, principalOf(request));
      clearRefreshCookie(reply);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/password',
    {
      config: { access: 'signedIn' },
      schema: { body: PasswordChange, response: { 204: Type.Null(), ...problems(400, 401, 403, 404, 429) } },
    },
    async (request, reply) => {
      await changePassword(deps, throttle, principalOf(request), request.body, request.ip);
      return reply.code(204).send(null);
    },
  );
};
