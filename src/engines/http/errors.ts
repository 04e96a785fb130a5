// How transport failures and HTTP answers of an engine node become EngineErrors.
// The failure kind decides what the router does (fail over, cool down, or give
// the caller a 4xx), so the mapping lives in one place for every remote engine.
import { EngineError, type EngineErrorOptions, type EngineFailure } from '../types.js';

/** Transport errors that mean the node cannot be reached (before any answer). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Describes one node in messages and keeps its secret out of them. */
export interface ErrorContext {
  /** e.g. `openai node http://10.0.0.5:8000` (never with credentials). */
  label: string;
  secrets: readonly string[];
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0 && out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

export function engineError(ctx: ErrorContext, failure: EngineFailure, message: string, options: EngineErrorOptions = {}): EngineError {
  return new EngineError(failure, redact(message, ctx.secrets), options);
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // Node's happy-eyeballs connect reports an AggregateError of per-address failures.
  const inner = (err as { errors?: unknown[] } | null)?.errors;
  return Array.isArray(inner) && inner.length > 0 ? codeOf(inner[0]) : undefined;
}

/** A transport error as one line: its message, with the code where the message lacks it (an AggregateError has no message of its own). */
export function describeTransportError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  return code && !message.includes(code) ? `${message} (${code})` : message || code || 'unknown error';
}

/**
 * A request failed before the answer's status was known: the node is down,
 * slow, or our caller gave up. The caller's abort wins over whatever undici reports.
 */
export function requestError(ctx: ErrorContext, err: unknown, signal: AbortSignal): EngineError {
  if (err instanceof EngineError) return err;
  if (signal.aborted) return engineError(ctx, 'aborted', `${ctx.label}: request cancelled by the caller`, { cause: err });
  const code = codeOf(err);
  if (code !== undefined && TIMEOUT_CODES.has(code))
    return engineError(ctx, 'timeout', `${ctx.label} did not answer in time`, { cause: err });
  if (code !== undefined && UNREACHABLE_CODES.has(code))
    return engineError(ctx, 'unreachable', `${ctx.label} is unreachable: ${describeTransportError(err)}`, { cause: err });
  // TLS and other connection-level surprises: the node cannot be used right now.
  return engineError(ctx, 'unreachable', `${ctx.label} failed: ${describeTransportError(err)}`, { cause: err });
}

/**
 * A stream broke after the engine had accepted the request: never retryable,
 * because output may already be on its way to the client.
 */
export function streamError(ctx: ErrorContext, err: unknown, signal: AbortSignal): EngineError {
  if (err instanceof EngineError) return err;
  if (signal.aborted) return engineError(ctx, 'aborted', `${ctx.label}: stream cancelled by the caller`, { cause: err, retryable: false });
  const code = codeOf(err);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return engineError(ctx, 'timeout', `${ctx.label} went silent mid-answer`, { cause: err, retryable: false });
  }
  return engineError(ctx, 'upstream_error', `${ctx.label} broke off its answer: ${describeTransportError(err)}`, {
    cause: err,
    retryable: false,
  });
}

/** The human part of an engine's error body: OpenAI `{error:{message}}`, Ollama `{error}`, vLLM `{message}`, FastAPI `{detail}`, or text. */
export function upstreamMessage(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const body = JSON.parse(trimmed) as Record<string, unknown>;
      const error = body.error;
      const candidate =
        typeof error === 'string'
          ? error
          : typeof (error as { message?: unknown } | null)?.message === 'string'
            ? (error as { message: string }).message
            : typeof body.message === 'string'
              ? body.message
              : typeof body.detail === 'string'
                ? body.detail
                : undefined;
      if (candidate !== undefined) return clip(candidate);
    } catch {
      // not JSON after all: fall through to the raw text
    }
  }
  return clip(trimmed);
}

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 500 ? `${oneLine.slice(0, 500)}…` : oneLine || '(no message)';
}

/**
 * A non-2xx answer to `path`. `model` is set for requests that name a model. A 404
 * is one of two things, told apart by its body: the node does not have the model
 * (OpenAI's `code: "model_not_found"`, vLLM's "The model `x` does not exist",
 * Ollama's `model "x" not found`), or the node has no such endpoint (a server
 * without /v1/embeddings or /v1/completions: FastAPI's `{"detail":"Not Found"}`,
 * Go's `404 page not found`, an HTML page, OpenAI's "This is a chat model and not
 * supported in the v1/completions endpoint"). Only the first says anything about
 * the model; neither may change what the router believes the node serves.
 */
export function statusError(ctx: ErrorContext, status: number, bodyText: string, model?: string, path?: string): EngineError {
  const detail = upstreamMessage(bodyText);
  const said = `${ctx.label} answered ${status}: ${detail}`;
  if (status === 503 || status === 429) return engineError(ctx, 'overloaded', said, { status });
  if (status >= 500) return engineError(ctx, 'upstream_error', said, { status });
  if (status === 404 && model !== undefined && saysModelMissing(bodyText, detail, model)) {
    return engineError(ctx, 'model_not_found', `model "${model}" is not available on ${ctx.label} (${detail})`, { status });
  }
  if (status === 404 && path !== undefined) {
    return engineError(ctx, 'endpoint_missing', `${ctx.label} has no ${path} endpoint (it answered 404: ${detail})`, {
      status,
      endpoint: path,
    });
  }
  if (status === 408) return engineError(ctx, 'timeout', said, { status });
  return engineError(ctx, 'rejected', said, { status });
}

const MISSING = /\b(not found|does not exist|doesn't exist|no such|not loaded)\b/i;

/** Whether a 404's body blames the model rather than the path (the model's own name taken out, so it cannot decide). */
function saysModelMissing(bodyText: string, detail: string, model: string): boolean {
  if (errorCode(bodyText) === 'model_not_found') return true;
  const text = model.length > 0 ? detail.split(model).join(' ') : detail;
  return /\bmodel\b/i.test(text) && MISSING.test(text);
}

/** OpenAI's `error.code`, when the body has one. */
function errorCode(bodyText: string): unknown {
  const trimmed = bodyText.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return (JSON.parse(trimmed) as { error?: { code?: unknown } }).error?.code;
  } catch {
    return undefined;
  }
}
