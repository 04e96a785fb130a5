// Relays an engine's pull progress as server-sent events with camelCase frames:
// `{status, digest?, total?, completed?}` … `{status: "success"}`, or on failure
// `{status: "error", error: {message, code}}`. Either of those two is the last
// frame; no `[DONE]` follows (that terminator belongs to the chat stream).
//
// The first frame is awaited before the headers go out, so a pull the engine
// refuses outright (unreachable node, bad URL) is a plain HTTP error. Only the
// node's own failures count against it (towards its cooldown): a download from
// the caller's URL that fails is the caller's error, a 400 naming the reason.
import type { FastifyReply } from 'fastify';
import { AppError, shuttingDown } from '../../../platform/errors.js';
import { EngineError, type OutboundGuard, type PullProgress } from '../../../engines/types.js';
import { ABORTED, AbortableReader } from '../calls/client-watch.js';
import type { OpenCalls } from '../calls/open-calls.js';
import { SseWriter } from '../sse/writer.js';
import type { Lease } from '../router/types.js';

export interface PullJob {
  lease: Lease;
  model: string;
  url?: string | undefined;
  sha256?: string | undefined;
  /** The caller's rule for the download's addresses (a tenant admin's is stricter than the engine's). */
  guard: OutboundGuard;
  /** Whether the pull may replace a model of the same name (not a tenant admin's, on a shared engine). */
  replace: boolean;
  /** Counts the pull while it runs, so that a shutdown can stop it cleanly. */
  calls: OpenCalls;
  heartbeatMs: number;
  retryAfterSeconds: number;
  /** Runs before the success frame goes out (the node's model list is re-read, so the model is usable at once). */
  beforeSuccess(): Promise<void>;
}

export async function relayPull(job: PullJob, reply: FastifyReply): Promise<void> {
  const { lease } = job;
  const client = job.calls.watch(reply.raw);
  const frames = lease.engine.pull({
    model: job.model,
    ...(job.url ? { url: job.url } : {}),
    ...(job.sha256 ? { sha256: job.sha256 } : {}),
    guard: job.guard,
    replace: job.replace,
    signal: client.signal,
  });
  const reader = new AbortableReader(frames[Symbol.asyncIterator](), client.signal);
  let released = false;
  const release = (outcome: 'ok' | 'failed') => {
    if (!released) lease.release(outcome);
    released = true;
  };
  try {
    let next: IteratorResult<PullProgress> | typeof ABORTED;
    try {
      next = await reader.next();
    } catch (error) {
      release(nodeOutcome(error));
      if (client.gone()) return void reply.hijack();
      if (client.interrupted()) throw shuttingDown();
      throw beforeFirstFrame(error, job.retryAfterSeconds);
    }
    if (next === ABORTED) {
      // Stopped before anything was sent: the client left, or the server is shutting down
      // and the answer can still be a plain 503 problem.
      reader.abandon();
      release('ok');
      if (client.gone()) return void reply.hijack();
      throw shuttingDown();
    }
    const headers = reply.getHeaders();
    reply.hijack();
    const sse = new SseWriter(reply.raw, job.heartbeatMs);
    let succeeded = false;
    let failure: unknown;
    try {
      sse.open(headers);
      while (next !== ABORTED && !next.done && !client.gone()) {
        const frame = progressFrame(next.value);
        if (frame.status === 'success') {
          await job
            .beforeSuccess()
            .catch((error: unknown) => reply.log.warn({ err: error, nodeId: lease.node.id }, 'model list refresh after pull failed'));
          succeeded = true;
        }
        await sse.send(frame);
        next = await reader.next();
      }
    } catch (error) {
      failure = error;
    }
    if (succeeded) reader.finish();
    else reader.abandon();
    if (!client.gone() && !succeeded) {
      reply.log.warn({ err: failure, nodeId: lease.node.id, engine: lease.node.engine }, 'model pull failed');
      await sse.send(client.interrupted() ? STOPPED_FRAME : errorFrame(failure));
    }
    sse.end();
    release(client.gone() || succeeded ? 'ok' : nodeOutcome(failure));
  } finally {
    release('ok');
    client.dispose();
  }
}

const STOPPED_FRAME = {
  status: 'error',
  error: {
    message: 'The server is shutting down: the pull was stopped and nothing was kept. Retry it later.',
    code: 'server_shutting_down',
  },
};

/** Only the fields the frame contract names, camelCase, whatever the engine added. */
function progressFrame(p: PullProgress): PullProgress {
  return {
    status: p.status,
    ...(p.digest !== undefined ? { digest: p.digest } : {}),
    ...(p.total !== undefined ? { total: p.total } : {}),
    ...(p.completed !== undefined ? { completed: p.completed } : {}),
  };
}

/**
 * The admin asked for this pull, so the engine's reason is shown (a checksum
 * mismatch, a model the registry does not have); `code` is the failure kind.
 */
function errorFrame(failure: unknown) {
  if (failure instanceof EngineError) return { status: 'error', error: { message: failure.message, code: failure.failure } };
  if (failure === undefined)
    return { status: 'error', error: { message: 'The engine ended the pull without reporting success.', code: 'upstream_error' } };
  return { status: 'error', error: { message: 'The pull failed unexpectedly.', code: 'internal' } };
}

function beforeFirstFrame(error: unknown, retryAfterSeconds: number): unknown {
  if (!(error instanceof EngineError)) return error;
  if (error.failure === 'rejected' || error.failure === 'endpoint_missing')
    return new AppError('BAD_REQUEST', `The engine refused the pull: ${error.message}`);
  // The caller's own URL, so the reason is theirs to read (the same words the CLI prints).
  if (error.failure === 'download_failed') return new AppError('BAD_REQUEST', error.message);
  if (error.failure === 'model_not_found') return new AppError('NOT_FOUND', `The engine could not find the model: ${error.message}`);
  if (error.failure === 'conflict') return new AppError('CONFLICT', error.message);
  return new AppError('SERVICE_UNAVAILABLE', 'The node could not start the pull. Retry later.', { retryAfterSeconds });
}

// Only failures that say something about the node count against it: retryable ones
// (unreachable, timeout, 5xx). A bad or failing download URL is `download_failed`, never retryable.
function nodeOutcome(error: unknown): 'ok' | 'failed' {
  return error instanceof EngineError && error.retryable ? 'failed' : 'ok';
}
