// SCIM's error schema (RFC 7644 §3.12) for every refusal on the SCIM routes: 401s, 404s
// and unparsable bodies included. `status` is a string, `scimType` names the kind of a
// 400 or 409. The gateway's AppErrors raised on the way (the edge's 401, a body too
// large, invalid JSON, a framework 404) are rendered in the same shape here.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../../platform/errors.js';
import { SCHEMA, SCIM_MEDIA_TYPE } from './protocol.js';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** An AppError that also names its SCIM error type. */
export class ScimError extends AppError {
  constructor(
    code: ErrorCode,
    detail: string,
    readonly scimType?: ScimType,
  ) {
    super(code, detail);
  }
}

export const invalidFilter = (detail: string) => new ScimError('BAD_REQUEST', detail, 'invalidFilter');
export const invalidValue = (detail: string) => new ScimError('BAD_REQUEST', detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError('BAD_REQUEST', detail, 'invalidSyntax');
export const invalidPath = (detail: string) => new ScimError('BAD_REQUEST', detail, 'invalidPath');
export const noTarget = (detail: string) => new ScimError('BAD_REQUEST', detail, 'noTarget');
export const mutability = (detail: string) => new ScimError('BAD_REQUEST', detail, 'mutability');
export const uniqueness = (detail: string) => new ScimError('CONFLICT', detail, 'uniqueness');
/** One wording for an unknown id and another tenant's: nothing tells them apart. */
export const resourceNotFound = (kind: 'User' | 'Group', id: string) =>
  new ScimError('NOT_FOUND', `${kind} ${JSON.stringify(id.slice(0, 100))} not found.`);

export interface ScimErrorBody {
  schemas: [typeof SCHEMA.error];
  status: string;
  scimType?: ScimType;
  detail: string;
}

/** The error as SCIM renders it; undefined for an unexpected failure (a 500 whose details stay in the log). */
function toScimError(error: FastifyError | AppError): { status: number; scimType?: ScimType; detail: string } | undefined {
  if (error instanceof ScimError)
    return { status: error.status, detail: error.detail, ...(error.scimType ? { scimType: error.scimType } : {}) };
  if (error instanceof AppError) {
    const scimType: ScimType | undefined =
      error.code === 'VALIDATION_FAILED'
        ? 'invalidValue'
        : error.code === 'CONFLICT'
          ? 'uniqueness'
          : error.code === 'BAD_REQUEST'
            ? 'invalidSyntax'
            : undefined;
    // The edge's 401 speaks of API keys and access tokens, which the SCIM routes do not take.
    const detail = error.code === 'UNAUTHENTICATED' ? 'A valid SCIM bearer token is required.' : error.detail;
    return { status: error.status, detail, ...(scimType ? { scimType } : {}) };
  }
  const framework = error as FastifyError;
  if (framework.validation) {
    const first = framework.validation[0];
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : 'the request';
    return { status: 400, scimType: 'invalidValue', detail: `${field} ${first?.message ?? 'is invalid'}.` };
  }
  const status = framework.statusCode ?? 500;
  if (status === 413) return { status, detail: 'The request body is larger than this server accepts.' };
  if (status === 415) return { status, detail: `Send the request body as ${SCIM_MEDIA_TYPE} or application/json.` };
  if (status === 404) return { status, detail: 'Not found.' };
  if (status >= 400 && status < 500) {
    const invalidJson = framework.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError;
    return {
      status,
      ...(invalidJson || status === 400 ? { scimType: 'invalidSyntax' as const } : {}),
      detail: invalidJson ? 'The request body is not valid JSON.' : framework.message,
    };
  }
  return undefined;
}

export function sendScimError(reply: FastifyReply, status: number, detail: string, scimType?: ScimType) {
  const body: ScimErrorBody = { schemas: [SCHEMA.error], status: String(status), ...(scimType ? { scimType } : {}), detail };
  if (status === 401) reply.header('WWW-Authenticate', 'Bearer realm="SCIM"');
  return reply.code(status).type(`${SCIM_MEDIA_TYPE}; charset=utf-8`).send(JSON.stringify(body));
}

/** The SCIM routes' error handler: every failure leaves in the SCIM error schema. */
export function scimErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = toScimError(error);
  if (known) {
    if (error instanceof AppError && error.extra.retryAfterSeconds !== undefined)
      reply.header('Retry-After', String(error.extra.retryAfterSeconds));
    return sendScimError(reply, known.status, known.detail, known.scimType);
  }
  request.log.error({ err: error }, 'request failed');
  return sendScimError(reply, 500, 'An unexpected error occurred. Quote the X-Correlation-ID header when reporting it.');
}
