// How a run ended, in the words its rows and usage record use: the run's OpenAI status
// with last_error or incomplete_details, the item's status and incomplete reason, and
// the usage record's status, for every way a generation can end (finished, stopped,
// engine failure before or during the answer).
import { EngineError, type FinishReason, type ToolCall } from '../../../engines/types.js';
import { AppError } from '../../../platform/errors.js';
import { ClientClosedError, ServerStoppingError } from '../calls/client-watch.js';
import type { ItemRow } from '../history/repository.js';
import type { TokenUsage } from '../tokens/count.js';
import type { RunEnding, RunRow } from './repository.js';

/** Why a run stopped before its engine finished (the abort reason of its signal). */
export type StopReason = 'client_gone' | 'cancelled' | 'expired' | 'shutdown';

export class RunStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(`The run stopped: ${reason}.`);
    this.name = 'RunStopped';
  }
}

/** What a generation came to; the executor adds the rows it wrote (Outcome). */
export interface Result {
  content: string;
  finishReason: FinishReason | null;
  usage: TokenUsage;
  /** Set when the run stopped early. */
  stopped?: StopReason;
  /** The engine's failure, and whether it came before any answer (then nothing was generated: the caller may answer with an HTTP error). */
  failure?: { error: unknown; beforeAnswer: boolean };
  /** The node that answered. */
  nodeId: string | null;
  /** The functions the model called (only when the generation offered tools). */
  toolCalls?: ToolCall[];
}

export interface Outcome extends Result {
  /** The run as ended (undefined when it had already ended elsewhere, e.g. cancelled before it started). */
  run: RunRow | undefined;
  item: ItemRow | undefined;
}

export function stopReasonOf(reason: unknown): StopReason {
  if (reason instanceof RunStopped) return reason.reason;
  if (reason instanceof ClientClosedError) return 'client_gone';
  if (reason instanceof ServerStoppingError) return 'shutdown';
  return 'cancelled';
}

export const SHUTDOWN_MESSAGE = 'The server shut down while the answer was being generated; the answer is incomplete.';

/** What the run and its item record for a result (OpenAI's statuses and reasons). */
export function endingOf(result: Result): {
  run: RunEnding;
  item: { status: 'completed' | 'incomplete'; incompleteReason?: string };
} {
  switch (result.stopped) {
    case 'cancelled':
      return { run: { status: 'cancelled' }, item: { status: 'incomplete', incompleteReason: 'run_cancelled' } };
    case 'expired':
      return { run: { status: 'expired' }, item: { status: 'incomplete', incompleteReason: 'run_expired' } };
    case 'client_gone':
      return {
        run: { status: 'incomplete', incompleteDetails: { reason: 'client_disconnected' } },
        item: { status: 'incomplete', incompleteReason: 'client_disconnected' },
      };
    case 'shutdown':
      return {
        run: { status: 'failed', lastError: { code: 'server_error', message: SHUTDOWN_MESSAGE } },
        item: { status: 'incomplete', incompleteReason: 'run_failed' },
      };
  }
  if (result.failure) {
    return {
      run: { status: 'failed', lastError: lastErrorOf(result.failure) },
      item: { status: 'incomplete', incompleteReason: 'run_failed' },
    };
  }
  if (result.finishReason === 'length') {
    return {
      run: { status: 'incomplete', incompleteDetails: { reason: 'max_completion_tokens' } },
      item: { status: 'incomplete', incompleteReason: 'max_tokens' },
    };
  }
  return { run: { status: 'completed' }, item: { status: 'completed' } };
}

function lastErrorOf({ error, beforeAnswer }: { error: unknown; beforeAnswer: boolean }): RunEnding['lastError'] {
  if (error instanceof AppError) {
    // The router's 503 (no healthy node) or 400 (a model no node serves any more), or
    // retrieval's 404 (a grounding scope id no longer the tenant's): the caller's to fix.
    return { code: error.status >= 400 && error.status < 500 ? 'invalid_prompt' : 'server_error', message: error.detail };
  }
  if (error instanceof EngineError && error.failure === 'timeout')
    return { code: 'server_error', message: 'The model stopped responding; the answer is incomplete.' };
  return {
    code: 'server_error',
    message: beforeAnswer ? 'The model could not be reached.' : 'The model failed while generating the answer; the answer is incomplete.',
  };
}

export function usageStatusOf(result: Result): string {
  if (result.stopped === 'client_gone' || result.stopped === 'cancelled' || result.stopped === 'expired') return 'client_closed';
  if (result.stopped === 'shutdown') return 'interrupted';
  if (result.failure)
    return result.failure.error instanceof AppError && result.failure.error.status === 503 ? 'unavailable' : 'engine_error';
  return 'ok';
}
