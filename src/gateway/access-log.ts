// The request log: one line per request, written when it completes (method, path,
// client address, status, duration, correlation id), as nginx or Envoy write an
// access log, instead of Fastify's two ("incoming request", "request completed").
//
// Every request writes this line, so it is kept cheap: its shape is fixed and can
// hold nothing secret (no headers, no query string, no body), so it goes through a
// logger without redaction, which would otherwise walk every redacted path on every
// line. A request that failed with an error is logged through the request's own,
// redacting logger, since an error may carry anything. So is every other line.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { stripQuery } from '../platform/logging.js';
import type { GatewayMetrics } from '../platform/metrics/metrics.js';

export const CORRELATION_LOG_LABEL = 'correlationId';

export class AccessLog extends LogController {
  /**
   * `lines`: a logger on the same stream and level as the app's, without redaction.
   * `metrics`: counts the request by route and status, with the duration this line
   * logs (one clock read for both), when /metrics is on.
   */
  constructor(
    private readonly lines: Logger,
    private readonly metrics?: Pick<GatewayMetrics, 'request'>,
  ) {
    super({ requestIdLogLabel: CORRELATION_LOG_LABEL });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = reply.elapsedTime;
    this.metrics?.request(request.routeOptions.config, request.method, reply.statusCode, responseTime);
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime }, 'request errored');
      return;
    }
    if (!this.lines.isLevelEnabled('info')) return;
    this.lines.info(
      {
        [CORRELATION_LOG_LABEL]: request.id,
        req: { method: request.method, url: stripQuery(request.url), ip: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime,
      },
      'request completed',
    );
  }
}
