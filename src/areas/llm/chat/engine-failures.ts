// Engine failures that happen before any byte went to the client, as the HTTP
// answer the caller gets (spec 7). The engine's own message stays in our log:
// it can name internal hosts, and it is no business of the caller's.
import { AppError } from '../../../platform/errors.js';
import { EngineError } from '../../../engines/types.js';

/** Statuses with which engines refuse a request for what it holds (too long, a bad field). */
const CONTENT_REFUSALS = new Set([400, 413, 422]);

/**
 * AppErrors (the router's 400/503) pass through. A model the node does not have
 * loaded and an engine that is down, slow or overloaded are 503 with Retry-After
 * (retry after the next health check). A node without the endpoint the request
 * needs is a 400 naming the endpoint: retrying changes nothing, and the caller can
 * pick another model. An engine refusing the request (a 4xx other than 404/408/429)
 * is a 400, and so is a field the engine cannot honour (the adapter's detail names it).
 * Anything else is not ours to explain: it stays a 500.
 */
export function toHttpFailure(error: unknown, retryAfterSeconds: number): unknown {
  if (!(error instanceof EngineError)) return error;
  switch (error.failure) {
    case 'model_not_found':
      return new AppError('SERVICE_UNAVAILABLE', 'The requested model is not loaded on any node serving it. Retry later.', {
        retryAfterSeconds,
      });
    case 'endpoint_missing':
      // The path is ours to show (the adapter's constant); the node's own answer stays in the log.
      return new AppError(
        'BAD_REQUEST',
        `The compute node serving this model has no ${error.options.endpoint ?? 'such'} endpoint (it answered 404), so it cannot answer this request. Use a model served by a node that has it.`,
      );
    case 'rejected':
      return new AppError(
        'BAD_REQUEST',
        // Only a refusal of the request's content can be about its size; a 401/403 is the node refusing us.
        error.options.status === undefined || CONTENT_REFUSALS.has(error.options.status)
          ? 'The engine serving this model rejected the request (for example, the messages and max_tokens do not fit its context window).'
          : `The engine serving this model rejected the request (it answered ${error.options.status}).`,
      );
    case 'unsupported':
      // The adapter's own wording, naming the field: no engine text or host in it.
      return new AppError('BAD_REQUEST', error.message);
    case 'aborted':
      return error;
    default:
      return new AppError('SERVICE_UNAVAILABLE', 'No node serving this model could answer. Retry later.', { retryAfterSeconds });
  }
}
