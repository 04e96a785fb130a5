// Single sign-on: a tenant admin's connections (/api/auth/tenants/{tenantId}/sso/
// connections), and the public sign-in routes a browser is sent through (/start, the
// IdP's /callback), discovery by e-mail and the IdP's back-channel logout.
//
// The sign-in routes answer browsers, so their outcomes are redirects: to the IdP; back
// to `returnTo` with the refresh cookie set (the console reads its token through
// /refresh); to `returnTo#twoFactorToken=…` when the user's TOTP code is still needed
// (POST /api/auth/verify-2fa with it); or to `/#ssoError=<reason>` when refused. The
// fragment never reaches a server or a log. Refused callbacks count per address on their
// own (GATEWAY_SSO_MAX_REFUSED_CALLBACKS_PER_ADDRESS), never against password sign-in.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { setRefreshCookie } from '../sessions/cookie.js';
import { publicOrigin } from '../sessions/origin.js';
import { Throttle } from '../sessions/throttle.js';
import { createConnection, deleteConnection, getConnection, listConnections, updateConnection } from './connections.js';
import type { SsoDeps } from './deps.js';
import { discoverConnections } from './discover.js';
import { SignInRefused } from './linking.js';
import { backchannelLogout } from './logout.js';
import {
  BackchannelBody,
  CallbackQuery,
  ConnectionParams,
  DiscoverBody,
  DiscoverResponse,
  NewSsoConnection,
  SignInParams,
  SsoConnection,
  SsoConnectionList,
  SsoConnectionPatch,
  StartQuery,
  TenantParams,
} from './schemas.js';
import { completeSignIn, startSignIn, TRANSACTION_COOKIE, TRANSACTION_COOKIE_PATH } from './sign-in.js';

const TRANSACTION_COOKIE_ATTRIBUTES = { httpOnly: true, secure: true, sameSite: 'lax', path: TRANSACTION_COOKIE_PATH } as const;

export const refusedCallbackKey = (address: string) => `sso-callback:ip:${address}`;

export const ssoRoutes: FastifyPluginAsyncTypebox<{ deps: SsoDeps }> = async (app, { deps }) => {
  const callbackThrottle = new Throttle(deps.failures, 'Too many refused single sign-ins from this address; try again later.');
  const discoverThrottle = new Throttle(deps.failures, 'Too many sign-in look-ups from this address; try again later.');
  const origin = (request: Parameters<typeof publicOrigin>[0]) => publicOrigin(request, deps.config);

  // Back-channel logout tokens come as an HTML form would post them (OpenID Connect Back-Channel Logout 1.0, 2.5).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const connections = '/tenants/:tenantId/sso/connections';
  app.get(
    connections,
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, response: { 200: SsoConnectionList, ...problems(401, 403, 404) } },
    },
    async (request) => ({ data: await listConnections(deps, principalOf(request), request.params.tenantId, origin(request)) }),
  );

  app.post(
    connections,
    {
      config: { access: 'tenantAdmin' },
      schema: { params: TenantParams, body: NewSsoConnection, response: { 201: SsoConnection, ...problems(400, 401, 403, 404) } },
    },
    async (request, reply) =>
      reply.code(201).send(await createConnection(deps, principalOf(request), request.params.tenantId, request.body, origin(request))),
  );

  app.get(
    `${connections}/:connectionId`,
    {
      config: { access: 'tenantAdmin' },
      schema: { params: ConnectionParams, response: { 200: SsoConnection, ...problems(401, 403, 404) } },
    },
    async (request) => getConnection(deps, principalOf(request), request.params.tenantId, request.params.connectionId, origin(request)),
  );

  app.patch(
    `${connections}/:connectionId`,
    {
      config: { access: 'tenantAdmin' },
      schema: { params: ConnectionParams, body: SsoConnectionPatch, response: { 200: SsoConnection, ...problems(400, 401, 403, 404) } },
    },
    async (request) =>
      updateConnection(deps, principalOf(request), request.params.tenantId, request.params.connectionId, request.body, origin(request)),
  );

  app.delete(
    `${connections}/:connectionId`,
    { config: { access: 'tenantAdmin' }, schema: { params: ConnectionParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteConnection(deps, principalOf(request), request.params.tenantId, request.params.connectionId);
      return reply.code(204).send(null);
    },
  );

  const redirect = (reply: FastifyReply, location: string) =>
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 302);
  const refusedTo = (base: string, reason: SignInRefused['reason']) => `${base}/#ssoError=${reason}`;

  app.get(
    '/sso/:connectionId/start',
    { config: { access: 'public' }, schema: { params: SignInParams, querystring: StartQuery, response: problems(400, 404) } },
    async (request, reply) => {
      const base = origin(request);
      try {
        const started = await startSignIn(deps, request.params.connectionId, request.query.returnTo, base);
        reply.setCookie(TRANSACTION_COOKIE, started.transaction, { ...TRANSACTION_COOKIE_ATTRIBUTES, maxAge: started.maxAgeSeconds });
        return redirect(reply, started.location);
      } catch (error) {
        if (!(error instanceof SignInRefused)) throw error;
        request.log.warn(
          { connectionId: request.params.connectionId, reason: error.reason, why: error.why },
          'sso sign-in could not start',
        );
        return redirect(reply, refusedTo(base, error.reason));
      }
    },
  );

  app.get(
    '/sso/callback/:connectionId',
    { config: { access: 'public' }, schema: { params: SignInParams, querystring: CallbackQuery, response: problems(400) } },
    async (request, reply) => {
      const base = origin(request);
      const connectionId = request.params.connectionId;
      const transaction = request.cookies[TRANSACTION_COOKIE];
      // Whatever happens, the transaction is spent: the browser forgets it too.
      reply.clearCookie(TRANSACTION_COOKIE, TRANSACTION_COOKIE_ATTRIBUTES);
      let attempt: Awaited<ReturnType<Throttle['begin']>>;
      try {
        attempt = await callbackThrottle.begin([
          { key: refusedCallbackKey(request.ip), max: deps.config.sso.maxRefusedCallbacksPerAddress },
        ]);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'TOO_MANY_REQUESTS') throw error;
        request.log.warn({ connectionId, reason: 'too_many_attempts' }, 'sso sign-in refused');
        return redirect(reply, refusedTo(base, 'too_many_attempts'));
      }
      try {
        const url = request.raw.url ?? '';
        const outcome = await completeSignIn(
          deps,
          connectionId,
          {
            query: request.query,
            rawQuery: url.includes('?') ? url.slice(url.indexOf('?') + 1) : '',
            transaction,
            client: { userAgent: request.headers['user-agent'], address: request.ip },
          },
          base,
        );
        if (outcome.kind === 'twoFactor')
          return redirect(reply, `${base}${outcome.returnTo}#twoFactorToken=${encodeURIComponent(outcome.twoFactorToken)}`);
        setRefreshCookie(reply, outcome.session.refreshToken, deps.config.auth.refreshTokenTtlDays);
        return redirect(reply, `${base}${outcome.returnTo}`);
      } catch (error) {
        if (!(error instanceof SignInRefused)) throw error;
        await attempt.fail();
        request.log.warn({ connectionId, reason: error.reason, why: error.why }, 'sso sign-in refused');
        return redirect(reply, refusedTo(base, error.reason));
      } finally {
        attempt.end();
      }
    },
  );

  app.post(
    '/sso/discover',
    { config: { access: 'public' }, schema: { body: DiscoverBody, response: { 200: DiscoverResponse, ...problems(400, 429) } } },
    async (request) => discoverConnections(deps, discoverThrottle, request.body.email, request.ip, origin(request)),
  );

  app.post(
    '/sso/backchannel-logout/:connectionId',
    {
      config: { access: 'public' },
      schema: { params: SignInParams, body: BackchannelBody, response: { 200: Type.Object({}), ...problems(400, 404, 503) } },
    },
    async (request, reply) => {
      const ended = await backchannelLogout(deps, request.params.connectionId, request.body.logout_token);
      request.log.info({ connectionId: request.params.connectionId, sessionsEnded: ended }, 'sso back-channel logout');
      return reply.header('cache-control', 'no-store').send({});
    },
  );
};
