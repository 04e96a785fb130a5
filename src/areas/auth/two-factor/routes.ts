// /api/auth/2fa/{setup,enable,disable} for the signed-in user, and the public
// /api/auth/verify-2fa that completes a two-factor login.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { setRefreshCookie } from '../sessions/cookie.js';
import { SessionResponse, UserSchema } from '../sessions/schemas.js';
import { Throttle } from '../sessions/throttle.js';
import { DisableBody, EnableBody, EnableResponse, SetupResponse, VerifyBody } from './schemas.js';
import { disableTwoFactor, enableTwoFactor, setupTwoFactor, verifyTwoFactor, type TwoFactorDeps } from './service.js';

export const twoFactorRoutes: FastifyPluginAsyncTypebox<{ deps: TwoFactorDeps }> = async (app, { deps }) => {
  const throttle = new Throttle(deps.failures, 'Too many wrong two-factor codes; try again later.');

  app.post(
    '/2fa/setup',
    { config: { access: 'signedIn' }, schema: { response: { 200: SetupResponse, ...problems(401, 403, 404, 409) } } },
    async (request) => setupTwoFactor(deps, principalOf(request)),
  );

  app.post(
    '/2fa/enable',
    {
      config: { access: 'signedIn' },
      schema: { body: EnableBody, response: { 200: EnableResponse, ...problems(400, 401, 403, 404, 409, 429) } },
    },
    async (request) => enableTwoFactor(deps, throttle, principalOf(request), request.body.code, request.ip),
  );

  app.post(
    '/2fa/disable',
    {
      config: { access: 'signedIn' },
      schema: { body: DisableBody, response: { 200: UserSchema, ...problems(400, 401, 403, 404, 409, 429) } },
    },
    async (request) => disableTwoFactor(deps, throttle, principalOf(request), request.body, request.ip),
  );

  app.post(
    '/verify-2fa',
    { config: { access: 'public' }, schema: { body: VerifyBody, response: { 200: SessionResponse, ...problems(400, 401, 429) } } },
    async (request, reply) => {
      const session = await verifyTwoFactor(deps, throttle, request.body, request.ip, request.headers['user-agent']);
      setRefreshCookie(reply, session.refreshToken, deps.config.auth.refreshTokenTtlDays);
      return session;
    },
  );
};
