// Builds the Gateway: the edge (correlation id, CORS, credentials, errors) in
// front of the areas. The route table is registered here, top to bottom.
import Fastify, { type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { pino, type DestinationStream } from 'pino';
import { parse as parseJsonSafely } from 'secure-json-parse';
import type { AppContext } from '../context.js';
import { loggerOptions } from '../platform/logging.js';
import { AccessLog } from './access-log.js';
import { requestLogger } from './request-logger.js';
import { AppError, shuttingDown } from '../platform/errors.js';
import { correlationIdFor, CORRELATION_HEADER } from './correlation.js';
import { LegacyCasing } from './legacy-casing.js';
import { registerErrorHandling, handleClientError, handleFrameworkError } from './error-handler.js';
import { registerAuthentication } from './authenticate.js';
import { edgeRoutes } from './edge-routes.js';
import { guardArea } from '../areas/guard.js';
import { sessionRoutes } from '../areas/auth/sessions/routes.js';
import { accountRoutes } from '../areas/auth/sessions/account-routes.js';
import { endSessions } from '../areas/auth/sessions/service.js';
import { twoFactorRoutes } from '../areas/auth/two-factor/routes.js';
import { tenantRoutes } from '../areas/auth/tenants/routes.js';
import { userRoutes } from '../areas/auth/users/routes.js';
import { apiKeyRoutes } from '../areas/auth/api-keys/routes.js';
import { scimTokenRoutes } from '../areas/auth/scim-tokens/routes.js';
import { SCIM_PREFIX, scimRoutes } from '../areas/auth/scim/routes.js';
import { roleForGroups } from '../areas/auth/sso/connections.js';
import { usageReportRoutes } from '../areas/auth/usage-reports/routes.js';
import { ssoRoutes } from '../areas/auth/sso/routes.js';
import { workspaceRoutes } from '../areas/os/workspaces/routes.js';
import { collectionRoutes } from '../areas/os/collections/routes.js';
import { documentRoutes } from '../areas/os/documents/routes.js';
import { retrievalRoutes } from '../areas/os/retrieval/routes.js';
import { llmRoutes } from '../areas/llm/routes.js';
import { ROUTE_ACCESS, type RouteAccess, type RouteSummary } from './fastify-types.js';
import { paramsSchemaFor, textRulePlugin, withTextRules } from './text-rules.js';
import { apiDocsRoutes, collectApiSchemas, declareDocsRoutesPublic } from './api-docs.js';
import { markRequestSpans, markTenantOnSpans } from './request-spans.js';
import { serveMetrics } from '../platform/metrics/routes.js';
import { consoleSite } from './console.js';

const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 1000;

export interface BuildOptions {
  https?: { key: string | Buffer; cert: string | Buffer };
  /** Where log lines go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
}

export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = ctx;
  // Asynchronous by default: a request never waits on a write to stdout. Lines are
  // buffered up to 4 KB, and a second at most, then written together: at a steady
  // 1,000 req/s one write per line cost ~70 µs of CPU per request (a thread-pool
  // write and its wake-up each time). Whatever is buffered is written at close and
  // at process exit.
  const logStream =
    options.logStream ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
  const logger = { ...loggerOptions(config.logLevel), stream: logStream };
  const accessLog = new AccessLog(pino(loggerOptions(config.logLevel, false), logStream), ctx.metrics);
  // Node enforces headersTimeout/requestTimeout only when it sweeps its connections,
  // every 30 s by default: a slow client would outlive the configured limits by that much.
  const connectionsCheckingInterval = Math.min(1000, Math.floor(Math.min(config.http.headersTimeoutMs, config.http.requestTimeoutMs) / 2));
  const literals = new LegacyCasing();
  // A request without a Host header is answered by our own hook (the problem shape,
  // a correlation id), not by Node's bare 400.
  const serverOptions = { connectionsCheckingInterval, requireHostHeader: false };
  const app = Fastify({
    logger,
    http: serverOptions,
    ...(options.https ? { https: { ...options.https, ...serverOptions } } : {}),
    clientErrorHandler: handleClientError,
    frameworkErrors: handleFrameworkError,
    genReqId: correlationIdFor,
    logController: accessLog,
    childLoggerFactory: requestLogger,
    rewriteUrl: (req) => literals.rewrite(req.url ?? '/'),
    bodyLimit: config.http.bodyLimitBytes,
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    // Believe only the X-Forwarded-For entries our own proxies appended (config.ts, readTrustProxy).
    trustProxy: config.trustProxyHops > 0 ? (_address: string, hop: number) => hop < config.trustProxyHops : false,
    // Our onRequest hook answers requests that arrive while closing: as a problem, with the correlation id.
    return503OnClosing: false,
    routerOptions: { ignoreDuplicateSlashes: true, maxParamLength: 200 },
    // Strict input: a string where a number or boolean belongs is a 400, never coerced.
    // Validation stops at the first error (Ajv's `allErrors` is a denial of service:
    // 100,000 bad array items made a 19 MB answer), and size limits are checked before
    // the items they bound. Every string follows the text rules.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false }, plugins: [textRulePlugin] },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Slow clients are cut off: headers must arrive within this time (requestTimeout bounds the body).
  app.server.headersTimeout = config.http.headersTimeoutMs;
  // So that a shutdown can reach the model calls in flight on each connection.
  ctx.llm.calls.attach(app.server);
  // Every route registered below teaches the legacy-casing rewrite its literals,
  // and lands in the route table with who may call it (tests walk it to check every
  // route's security against that declaration, and generate hostile input from its
  // request schemas).
  const routeTable: RouteSummary[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', declareDocsRoutesPublic);
  app.addHook('onRoute', (route) => {
    // Every string a request carries follows the text rules, path parameters included.
    const schema = { ...route.schema, params: route.schema?.params ?? paramsSchemaFor(route.url) };
    for (const part of ['body', 'querystring', 'params'] as const) {
      const partSchema = schema[part];
      if (partSchema == null) delete schema[part];
      else schema[part] = withTextRules(partSchema);
    }
    if (route.schema || schema.params) route.schema = schema;
    literals.add(route.url);
    const { body, querystring, params } = route.schema ?? {};
    const access = accessOf(route.method, route.url, route.config?.access);
    for (const method of [route.method].flat()) {
      routeTable.push({ method, url: route.url, access, hidden: route.schema?.hide === true, schema: { body, querystring, params } });
    }
  });
  // The OpenAPI document is built from every route registered from here on.
  const apiDocuments = await collectApiSchemas(app);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    // Model calls in flight get the grace period to finish, then are ended cleanly.
    ctx.llm.calls.stop(config.http.shutdownGraceMs);
  });
  // Handlers of ended streams may still be recording usage: the context closes after them.
  app.addHook('onClose', () => ctx.llm.calls.drained());
  // Whatever is still buffered reaches stdout before the process ends.
  if (!options.logStream) {
    app.addHook('onClose', async () => {
      try {
        (logStream as ReturnType<typeof pino.destination>).flushSync();
      } catch {
        // stdout already gone: nothing left to do
      }
    });
  }

  markRequestSpans(app);
  app.addHook('onRequest', async (request, reply) => {
    // On the raw response: Node merges it into every reply Fastify sends, and event
    // streams that hijack the reply and write to it directly carry it too.
    reply.raw.setHeader(CORRELATION_HEADER, String(request.id));
    // Requests still arriving on open connections during shutdown: retry elsewhere.
    if (closing) throw shuttingDown();
    // HTTP/1.1 requires it (RFC 9112, 3.2); HTTP/1.0 clients may leave it out.
    if (request.raw.headers.host === undefined && request.raw.httpVersion === '1.1')
      throw new AppError('BAD_REQUEST', 'The request has no Host header.');
  });

  // An empty body with a JSON content type is "no body", not a parse error:
  // clients often send the header on body-less POSTs such as revoke. Keys that
  // could reach an object's prototype if a body were ever merged (`__proto__`,
  // `constructor.prototype`) are refused, as Fastify's own parser does.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonSafely(text, null, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const message =
        error instanceof SyntaxError && !/forbidden prototype property/.test(error.message)
          ? 'The request body is not valid JSON.'
          : 'The request body has a key that is not accepted: __proto__ or constructor.prototype.';
      done(new AppError('BAD_REQUEST', message), undefined);
    }
  });

  const allowed = new Set(config.corsOrigins);
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    // X-Conversation-Id: the persisted chat's conversation, also on a turn that failed. Server-Timing: the gateway's overhead.
    exposedHeaders: ['X-Correlation-ID', 'Retry-After', 'X-Conversation-Id', 'Server-Timing'],
    strictPreflight: false,
  });
  await app.register(cookie);

  // Node health changes and background llm failures go to the request log's stream.
  const llmLog = app.log.child({ area: 'llm' });
  ctx.llm.setLog((level, message) => llmLog[level](message));
  // Documents uploaded before this start (or left half-done by a crash) are picked up now,
  // and the built-in embedder starts its preparation (converting its vectors once per data dir).
  const osLog = app.log.child({ area: 'os' });
  ctx.os.setLog((level, message) => osLog[level](message));
  ctx.os.start();
  const coordinationLog = app.log.child({ area: 'coordination' });
  ctx.coordination.setLog((level, message) => coordinationLog[level](message));

  // The web console's pages are the paths no route claims: the not-found handler asks it first.
  const site = consoleSite(config.console, app.log);
  registerErrorHandling(app, site?.fallback);
  registerAuthentication(app, ctx.auth.credentials, ctx.secrets.internalTokenKey);

  await app.register(edgeRoutes, { deps: ctx });
  await app.register(apiDocsRoutes, { docs: config.apiDocs, documents: apiDocuments });
  if (ctx.metrics) await serveMetrics(app, ctx.metrics, config.metrics);
  await app.register(async (areas) => {
    guardArea(areas, ctx.secrets.internalTokenKey);
    markTenantOnSpans(areas);
    await areas.register(sessionRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(accountRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(twoFactorRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(tenantRoutes, { prefix: '/api/auth', deps: ctx });
    // Changing a user may end their sessions: users get that from sessions through here.
    await areas.register(userRoutes, {
      prefix: '/api/auth',
      deps: { db: ctx.db, bus: ctx.bus, endSessions: (userId: string) => endSessions(ctx, userId) },
    });
    await areas.register(apiKeyRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(scimTokenRoutes, { prefix: '/api/auth', deps: ctx });
    // SCIM provisioning: a provisioned group gives a role only through the tenant's SSO connections' roleMapping.
    await areas.register(scimRoutes, {
      prefix: SCIM_PREFIX,
      deps: { db: ctx.db, bus: ctx.bus, config: ctx.config, roleForGroups: (tenantId, names) => roleForGroups(ctx.db, tenantId, names) },
    });
    await areas.register(usageReportRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(ssoRoutes, { prefix: '/api/auth', deps: ctx });
    await areas.register(workspaceRoutes, { prefix: '/api/os', deps: ctx });
    await areas.register(collectionRoutes, { prefix: '/api/os', deps: ctx });
    await areas.register(documentRoutes, { prefix: '/api/os', deps: ctx });
    await areas.register(retrievalRoutes, { prefix: '/api/os', deps: ctx.os.retrieval });
    await areas.register(llmRoutes, { prefix: '/api/llm/v1', deps: ctx });
  });
  await site?.register(app);
  return app;
}

/**
 * A route's declared access, or an error at startup: a route nobody said who may call
 * cannot be registered. CORS preflights (OPTIONS, answered by @fastify/cors) are the
 * exception: the edge never asks them for a credential, so they are public.
 */
function accessOf(method: string | string[], url: string, declared: unknown): RouteAccess {
  if (ROUTE_ACCESS.includes(declared as RouteAccess)) return declared as RouteAccess;
  const methods = [method].flat();
  if (declared === undefined && methods.every((m) => m === 'OPTIONS')) return 'public';
  throw new Error(
    `Route ${methods.join(',')} ${url} must declare who may call it: config.access, one of ${ROUTE_ACCESS.join(', ')} (got ${JSON.stringify(declared)}).`,
  );
}
