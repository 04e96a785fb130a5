// One error shape (RFC 9457 problem+json) and one code → status table.
// Handlers throw AppError; the gateway's error handler renders it.

export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_REFRESH_TOKEN: 401,
  INVALID_TWO_FACTOR: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  TOO_MANY_REQUESTS: 429,
  USER_IDENTITY_REQUIRED: 500,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
  VECTOR_UNAVAILABLE: 503,
  REQUEST_TIMEOUT: 408,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  431: 'Request Header Fields Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: {
      errors?: FieldError[];
      retryAfterSeconds?: number;
      /**
       * A 5xx that a retry cannot fix (nothing is coming until someone acts): sent as
       * `x-should-retry: false`, which OpenAI's SDKs obey instead of retrying a 503.
       */
      final?: boolean;
    } = {},
  ) {
    // An AppError is an answer for the client: rendered, never logged with a stack.
    // Capturing one would cost ~5 µs on every 4xx (bad credentials, unknown ids).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = ERROR_STATUS[code];
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  correlationId: string;
  errors?: FieldError[];
  /** OpenAI's error member, only on the /api/llm/v1 surface (gateway/error-handler.ts). */
  error?: OpenAIError;
}

/** OpenAI's error object: what its SDKs read to build their exceptions. */
export interface OpenAIError {
  message: string;
  type: string;
  param: string | null;
  code: string;
}

export function problem(status: number, code: string, detail: string, correlationId: string, errors?: FieldError[]): Problem {
  return {
    // A URN, not a URL: it names the problem type without pointing at a site we may not run.
    type: `urn:gateway:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    correlationId,
    ...(errors ? { errors } : {}),
  };
}

// Errors every route shares, so their wording is identical everywhere.
export const unauthenticated = () => new AppError('UNAUTHENTICATED', 'A valid API key or access token is required.');
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found.`);
export const forbidden = (detail = 'Your role does not allow this action.') => new AppError('FORBIDDEN', detail);
/** The server is closing: another replica (or this one, restarted) can take the request in a moment. */
export const shuttingDown = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down. Retry the request.', { retryAfterSeconds: 1 });
export const validation = (field: string, message: string) =>
  new AppError('VALIDATION_FAILED', `${field}: ${message}`, { errors: [{ field, message }] });
