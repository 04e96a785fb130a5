// /api/auth/2fa/{setup,enable,disable} for the signed-in user, and the public
// /api/auth/verify-2fa that completes a two-factor login.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { setRefreshCookie } from '../sessions/cookie.js';
import { SessionResponse, UserSchema } from '../sessions/schemas.js';
import { Throttle } from '../sessions/throttle.js';
import { disableTwoFactor, enableTwoFactor, setupTwoFactor, verifyTwoFactor } from './service.js';

// A TOTP code, or a recovery code (typed with dashes or spaces).
const Code = Type.String({ minLength: 1, maxLength: 64 });

export const twoFactorRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const throttle = new Throttle(ctx.failures, 'Too many wrong two-factor codes; try again later.');

  app.post(
    '/2fa/setup',
    { schema: { response: { 200: Type.Object({ secret: Type.String(), otpauthUri: Type.String() }), ...problems(401, 403, 404, 409) } } },
    async (request) => setupTwoFactor(ctx, principalOf(request)),
  );

  app.post(
    '/2fa/enable',
    {
      schema: {
        body: Type.Object({ code: Code }),
        response: { 200: Type.Object({ recoveryCodes: Type.Array(Type.String()) }), ...problems(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => enableTwoFactor(ctx, throttle, principalOf(request), request.body.code),
  );

  app.post(
    '/2fa/disable',
    {
      schema: {
        body: Type.Object({ code: Type.Optional(Code), password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, text: 'verbatim' })) }),
        response: { 200: UserSchema, ...problems(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => disableTwoFactor(ctx, throttle, principalOf(request), request.body),
  );

  app.post(
    '/verify-2fa',
    {
      config: { auth: 'public' },
      schema: {
        body: Type.Object({
          twoFactorToken: Type.String({ minLength: 1, maxLength: 512 }),
          code: Type.Optional(Code),
          recoveryCode: Type.Optional(Code),
        }),
        response: { 200: SessionResponse, ...problems(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const session = await verifyTwoFactor(ctx, throttle, request.body);
      setRefreshCookie(reply, session.refreshToken, ctx.config.auth.refreshTokenTtlDays);
      return session;
    },
  );
};
