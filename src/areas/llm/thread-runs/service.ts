// Reading, changing and cancelling runs, and their one step. Every read goes through
// the owner's thread: a run of another owner or tenant, or of another thread, is a 404
// (OpenAI's wording: "No run found with id 'run_…'.").
import type { Database } from '../../../platform/db/database.js';
import { AppError } from '../../../platform/errors.js';
import { isId } from '../../../platform/ids.js';
import type { Principal } from '../../../platform/identity.js';
import { ownerOf } from '../history/owner.js';
import { listOf, pageOf, type List, type ListQuery } from '../history/pages.js';
import type { RunExecutor } from '../runs/executor.js';
import { runRepository, type RunRow } from '../runs/repository.js';
import { notFoundWithId, requireIdShape } from '../threads/fields.js';
import { threadRow } from '../threads/rows.js';
import type { RunFeeds } from './feed.js';
import { runObject, stepIdOf, stepObject, type RunObject, type StepObject } from './objects.js';

export interface RunReadDeps {
  db: Database;
}

export interface CancelDeps extends RunReadDeps {
  runs: Pick<RunExecutor, 'cancel'>;
  feeds: RunFeeds;
}

export async function getRun(deps: RunReadDeps, principal: Principal, threadId: string, runId: string): Promise<RunRow> {
  const thread = await threadRow(deps.db, principal, threadId);
  requireIdShape('run', runId);
  const run = await runRepository.get(deps.db, principal.tenantId, thread.owner, thread.id, runId);
  if (!run) throw notFoundWithId('run', runId);
  return run;
}

/** The owner's run by id alone (the replay of an idempotent POST /threads/runs). */
export async function findRun(deps: RunReadDeps, principal: Principal, runId: string): Promise<RunRow | undefined> {
  return runRepository.find(deps.db, principal.tenantId, ownerOf(principal), runId);
}

export async function listRuns(deps: RunReadDeps, principal: Principal, threadId: string, query: ListQuery): Promise<List<RunObject>> {
  const page = pageOf(query, (id) => isId('run', id));
  const thread = await threadRow(deps.db, principal, threadId);
  return listOf(await runRepository.list(deps.db, principal.tenantId, thread.owner, thread.id, page), page, runObject);
}

export async function modifyRun(
  deps: RunReadDeps,
  principal: Principal,
  threadId: string,
  runId: string,
  metadata: Record<string, string> | null | undefined,
): Promise<RunRow> {
  const run = await getRun(deps, principal, threadId, runId);
  if (metadata == null) return run;
  const updated = await runRepository.updateMetadata(deps.db, principal.tenantId, run.owner, run.conversation_id, run.id, metadata);
  if (!updated) throw notFoundWithId('run', runId);
  return updated;
}

/**
 * Asks the run to stop: a queued one is cancelled at once, an executing one becomes
 * `cancelling` and its engine call is aborted now when it executes in this process
 * (on another replica, at its next lease renewal); the executor then ends it as
 * `cancelled` with its message incomplete.
 */
export async function cancelRun(deps: CancelDeps, principal: Principal, threadId: string, runId: string): Promise<RunRow> {
  const run = await getRun(deps, principal, threadId, runId);
  if (run.status === 'cancelling') return run;
  const asked = await runRepository.requestCancel(deps.db, run.id);
  if (!asked) {
    const now = (await runRepository.byId(deps.db, run.id)) ?? run;
    if (now.status === 'cancelling') return now;
    throw new AppError('BAD_REQUEST', `Cannot cancel run with status '${now.status}'.`);
  }
  if (asked.status === 'cancelling') deps.feeds.get(run.id)?.emit('thread.run.cancelling', runObject(asked));
  await deps.runs.cancel(run.id);
  return asked;
}

export async function listSteps(deps: RunReadDeps, principal: Principal, threadId: string, runId: string, query: ListQuery) {
  const run = await getRun(deps, principal, threadId, runId);
  const page = pageOf(query, (id) => id.startsWith('step_'));
  const step = stepObject(run);
  // One step at most: a cursor at it leaves nothing after (or before) it.
  const rows = step && page.after !== step.id && page.before !== step.id ? [step] : [];
  return listOf<StepObject, StepObject>(rows, page, (s) => s);
}

export async function getStep(deps: RunReadDeps, principal: Principal, threadId: string, runId: string, stepId: string) {
  const run = await getRun(deps, principal, threadId, runId);
  const step = stepId === stepIdOf(run.id) ? stepObject(run) : undefined;
  if (!step) throw new AppError('NOT_FOUND', `No step found with id '${stepId}'.`);
  return step;
}
