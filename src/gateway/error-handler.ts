// The one error handler: every failure leaves as application/problem+json with
// the correlation id. 5xx details never carry internals.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, problem, type ErrorCode, type FieldError, type OpenAIError, type Problem } from '../platform/errors.js';
import { CORRELATION_HEADER } from './correlation.js';
import type { NotFoundFallback } from './console.js';
import { sendScimError } from '../areas/auth/scim/errors.js';

// Failures Fastify or Node raise on their own, by HTTP status, as codes of the one table.
const FRAMEWORK_ERRORS: Partial<Record<number, [ErrorCode, string]>> = {
  404: ['NOT_FOUND', 'Not found.'],
  408: ['REQUEST_TIMEOUT', 'The request took too long to arrive.'],
  413: ['PAYLOAD_TOO_LARGE', 'The request body is larger than this server accepts.'],
  414: ['URI_TOO_LONG', 'The request URL is too long.'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.'],
  431: ['HEADERS_TOO_LARGE', 'The request headers are too large.'],
};

const MAX_REPORTED_ERRORS = 5;

/** Any failure as an AppError, or undefined for an unexpected one (a 500 whose details stay in the log). */
function toAppError(error: FastifyError): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error.validation) {
    // Validation stops at the first error (see app.ts), but the other branches of a
    // union report too (`must be null`, `must match a schema in anyOf`), on the same
    // field or one that holds it: the first error says most.
    const errors = withAllowedValues(error.validation)
      .map(fieldError)
      .filter((e, i, all) => !all.slice(0, i).some((earlier) => within(earlier.field, e.field)))
      .slice(0, MAX_REPORTED_ERRORS);
    return new AppError('VALIDATION_FAILED', `Validation failed: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { errors });
  }
  const status = error.statusCode ?? 500;
  const known = FRAMEWORK_ERRORS[status];
  if (known) return new AppError(...known);
  if (status >= 400 && status < 500) {
    const invalidJson = error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError;
    return new AppError('BAD_REQUEST', invalidJson ? 'The request body is not valid JSON.' : error.message);
  }
  return undefined;
}

/** `notFound`: asked first about a path no route matched (the console's pages, console.ts). */
export function registerErrorHandling(app: FastifyInstance, notFound?: NotFoundFallback): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toAppError(error);
    if (known) return send(reply, request, known);
    request.log.error({ err: error }, 'request failed');
    return send(reply, request, new AppError('INTERNAL', 'An unexpected error occurred. Quote the correlation id when reporting it.'));
  });

  app.setNotFoundHandler((request, reply) => {
    if (notFound?.(request, reply)) return;
    send(reply, request, new AppError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}.`));
  });
}

/**
 * Errors Fastify's router meets before any hook runs: a path that does not
 * percent-decode (`/workspaces/%E0%A4%A`), or a path parameter over its length
 * limit. Fastify would answer them in a JSON shape of its own, without a
 * correlation id.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header(CORRELATION_HEADER, String(request.id));
  const failure =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('URI_TOO_LONG', 'A part of the request path is longer than this server accepts.')
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('BAD_REQUEST', 'The request path is not valid: a percent-encoded part does not decode to UTF-8.')
        : (toAppError(error) ?? new AppError('INTERNAL', 'An unexpected error occurred. Quote the correlation id when reporting it.'));
  if (failure.code === 'INTERNAL') request.log.error({ err: error }, 'request failed');
  // A SCIM client reads SCIM's error schema, also for a path the router could not take apart.
  if (SCIM_SURFACE.test(request.url))
    void sendScimError(reply, failure.status, failure.detail, failure.status === 400 ? 'invalidSyntax' : undefined);
  else void send(reply, request, failure);
}

// The SCIM routes (areas/auth/scim/routes.ts), in any casing and with doubled slashes, as the router accepts them.
const SCIM_SURFACE = /^\/+api\/+auth\/+scim\/+v2(?:[/?#]|$)/i;

/**
 * Errors Node reports before or outside Fastify's request cycle: header/request
 * timeouts (408), oversized headers (431), unparsable HTTP (400). Answered in the
 * same problem shape with a correlation id (a new one: the request never got one),
 * then the connection is closed.
 */
export function handleClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : undefined;
  const known = status !== undefined ? FRAMEWORK_ERRORS[status] : undefined;
  const failure = known ? new AppError(...known) : new AppError('BAD_REQUEST', 'The request is not valid HTTP.');
  const correlationId = randomUUID();
  this.log.info({ correlationId, code: error.code }, 'client error');
  // As Node does: only when no response has started on this connection.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !pending?.headersSent) {
    const body = JSON.stringify(problem(failure.status, failure.code, failure.detail, correlationId));
    // An answer to HEAD has no body (its length is still given): a client reads none, and bytes after the headers break its parser.
    const raw = (error as ConnectionError & { rawPacket?: Buffer }).rawPacket;
    const head = raw?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.write(
      `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Correlation-ID: ${correlationId}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy(error);
}

function send(reply: FastifyReply, request: FastifyRequest, error: AppError) {
  if (error.extra.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.extra.retryAfterSeconds));
  if (error.extra.final) reply.header('x-should-retry', 'false');
  const body: Problem = problem(error.status, error.code, error.detail, String(request.id), error.extra.errors);
  if (onOpenAISurface(request.url)) body.error = openAIError(error);
  return reply.code(error.status).type('application/problem+json').send(body);
}

// The OpenAI-shaped surface (any casing and doubled slashes the router accepts). Only
// errors pay for this test, and an anchored regex on the path costs well under a microsecond.
const OPENAI_SURFACE = /^\/+api\/+llm\/+v1(?:[/?#]|$)/i;

/** Whether an answer to `url` is read by OpenAI's SDKs, which expect their `error` member. */
export function onOpenAISurface(url: string | undefined): boolean {
  return url !== undefined && OPENAI_SURFACE.test(url);
}

/**
 * OpenAI's error object, beside the problem fields: the SDKs build `err.message`,
 * `err.type`, `err.param` and `err.code` from it and report "(no body)" without it.
 * `type` follows OpenAI's names by status; `code` is ours, lower-cased as OpenAI's are.
 */
export function openAIError(error: AppError): OpenAIError {
  return {
    message: error.detail,
    type: openAIErrorType(error.status),
    param: error.extra.errors?.[0]?.field ?? null,
    code: error.code.toLowerCase(),
  };
}

function openAIErrorType(status: number): string {
  if (status >= 500) return 'server_error';
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_error';
    default:
      // 400, 409, 410, 413, 415…: OpenAI reports every other refusal of a request as this type.
      return 'invalid_request_error';
  }
}

/** Whether `field` is `container` or lies inside it (`messages[0].content` inside `messages`). */
function within(field: string, container: string): boolean {
  return field === container || field.startsWith(`${container}.`) || field.startsWith(`${container}[`) || container === 'body';
}

type AjvError = { instancePath: string; schemaPath?: string; message?: string; params: Record<string, unknown>; keyword: string };

/**
 * A union of literals (TypeBox's way to write an enum) fails as one `must be equal to
 * constant` per branch, then `must match a schema in anyOf`: the first says nothing
 * useful. The branches' values become one message that lists them, in place of the
 * first; an `enum` lists its values too. Other errors pass unchanged.
 */
function withAllowedValues(errors: readonly AjvError[]): AjvError[] {
  return errors.map((e) => {
    if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) return { ...e, message: allowed(e.params.allowedValues) };
    if (e.keyword !== 'const') return e;
    const union = /^(.*\/anyOf)\/\d+\/const$/.exec(e.schemaPath ?? '')?.[1];
    if (union === undefined) {
      // Inside a union of objects (a tagged union), one branch's literal is not the only value allowed.
      return /\/(anyOf|oneOf)\//.test(e.schemaPath ?? '') ? e : { ...e, message: allowed([e.params.allowedValue]) };
    }
    const branches = errors.filter((o) => o.instancePath === e.instancePath && o.schemaPath?.startsWith(`${union}/`));
    // A branch that failed for another reason (a union of a literal and a type): Ajv's words stand.
    if (!branches.every((o) => o.keyword === 'const' && /^\/\d+\/const$/.test(o.schemaPath!.slice(union.length)))) return e;
    return { ...e, message: allowed(branches.map((o) => o.params.allowedValue)) };
  });
}

function allowed(values: unknown[]): string {
  return values.length === 1 ? `must be ${JSON.stringify(values[0])}` : `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
}

// Ajv reports `/messages/0/role` or a missing property; name the field as a client wrote it.
function fieldError(v: AjvError): FieldError {
  const segments = v.instancePath.split('/').filter(Boolean);
  if (v.keyword === 'required' && typeof v.params.missingProperty === 'string') segments.push(v.params.missingProperty);
  let field = segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s), '');
  if (v.keyword === 'not' && segments.length === 0) field = 'body';
  const message = v.keyword === 'required' ? 'is required' : v.keyword === 'not' ? 'is not accepted here' : (v.message ?? 'is invalid');
  return { field: field || 'body', message };
}
