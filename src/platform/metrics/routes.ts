// Where GET /metrics is served: never on the public listener by default.
// - GATEWAY_METRICS_PORT: on a listener of its own (GATEWAY_METRICS_HOST, loopback by
//   default), with no credential: who can reach that address can scrape. Only
//   /metrics answers there.
// - GATEWAY_METRICS_TOKEN: on the public listener, only with `Authorization: Bearer
//   <token>` (compared in constant time); anything else is the usual 401 problem.
// Both may be set. Neither: /metrics is a 404 like any unknown path, and nothing is
// collected (context.ts builds no GatewayMetrics).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError, problem } from '../errors.js';
import type { MetricsConfig } from '../config.js';
import type { GatewayMetrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

/** Serves /metrics as configured: the token route on `app`, and/or the separate listener while `app` runs. */
export async function serveMetrics(app: FastifyInstance, metrics: GatewayMetrics, config: MetricsConfig): Promise<void> {
  if (config.token !== undefined) await app.register(metricsRoute, { metrics, token: config.token });
  const { port } = config;
  if (port === undefined) return;
  let server: Server | undefined;
  // Started with the app (listen() waits for onReady, and fails with it), stopped with it.
  app.addHook('onReady', async () => {
    server = await listenForMetrics(metrics, config.host, port);
  });
  app.addHook('onClose', async () => {
    if (server) await closeMetricsListener(server);
  });
}

/** GET /metrics on the public app, behind the bearer token. */
export async function metricsRoute(app: FastifyInstance, { metrics, token }: { metrics: GatewayMetrics; token: string }): Promise<void> {
  const expected = digest(token);
  app.get(
    METRICS_PATH,
    {
      // Public to the edge (which knows API keys and access tokens, not this token): the
      // route checks its own credential. Not in the OpenAPI document: an operator's
      // endpoint, in Prometheus' text format.
      config: { access: 'public' },
      schema: { hide: true },
    },
    async (request, reply) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
      if (!match || !timingSafeEqual(digest(match[1]!), expected))
        throw new AppError('UNAUTHENTICATED', 'Scraping /metrics takes the metrics token: Authorization: Bearer <token>.');
      const { contentType, body } = await metrics.scrape();
      return reply.type(contentType).send(body);
    },
  );
}

/** /metrics alone on its own listener; resolves once it listens (rejects with a message naming the variable). */
export async function listenForMetrics(metrics: GatewayMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify(problem(404, 'NOT_FOUND', 'This listener answers GET /metrics only.', randomUUID())));
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        res.writeHead(500, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify(problem(500, 'INTERNAL', 'The metrics could not be collected.', randomUUID())));
      },
    );
  });
  // A scraper keeps one connection; nothing else should hold this listener open at shutdown.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(`Cannot serve /metrics on ${host}:${port} (GATEWAY_METRICS_PORT, GATEWAY_METRICS_HOST): ${error.code ?? error.message}`),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function closeMetricsListener(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
