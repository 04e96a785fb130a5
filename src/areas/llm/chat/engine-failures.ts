// Engine failures that happen before any byte went to the client, as the HTTP
// answer the caller gets (spec 7). The engine's own message stays in our log:
// it can name internal hosts, and it is no business of the caller's.
import { AppError } from '../../../platform/errors.js';
import { EngineError } from '../../../engines/types.js';

/**
 * AppErrors (the router's 400/503) pass through. A model the node does not have
 * loaded and an engine that is down, slow or overloaded are 503 with Retry-After
 * (retry after the next health check); an engine refusing the request is a 400,
 * and so is a field the engine cannot honour (the adapter's detail names it).
 * Anything else is not ours to explain: it stays a 500.
 */
export function toHttpFailure(error: unknown, retryAfterSeconds: number): unknown {
  if (!(error instanceof EngineError)) return error;
  switch (error.failure) {
    case 'model_not_found':
      return new AppError('SERVICE_UNAVAILABLE', 'The requested model is not loaded on any node serving it. Retry later.', {
        retryAfterSeconds,
      });
    case 'rejected':
      return new AppError(
        'BAD_REQUEST',
        'The engine serving this model rejected the request (for example, the messages and max_tokens do not fit its context window).',
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
