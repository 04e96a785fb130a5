// A thread run in the background: once created (service.ts) it is handed to the run
// executor without the request awaiting it, so it survives its client. What the
// model sees is built when the run starts: the instructions, then as much of the
// thread as fits, grounded in the run's scope. Every step goes into the run's feed
// (OpenAI's stream events), which the HTTP readers follow and which is stored.
import type { ChatMessage } from '../../../engines/types.js';
import type { Database } from '../../../platform/db/database.js';
import type { Principal } from '../../../platform/identity.js';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../chat/schemas.js';
import { ground, historyBudget, type Grounding, type GroundingDeps } from '../grounding/ground.js';
import type { ItemRow, StoredScope } from '../history/repository.js';
import { windowOf } from '../history/trim.js';
import type { RunExecutor } from '../runs/executor.js';
import { runRepository, type RunRow } from '../runs/repository.js';
import { DELTA, deltaOf, endEvents, startEvents } from './events.js';
import type { RunFeed } from './feed.js';

export interface ExecutionDeps {
  db: Database;
  runs: RunExecutor;
  grounding: GroundingDeps;
  logError(error: unknown, message: string): void;
}

/** Starts the run and returns at once; errors are logged, never thrown (nobody awaits this). */
export function executeInBackground(
  deps: ExecutionDeps,
  feed: RunFeed,
  created: { run: RunRow; item: ItemRow; principal: Principal; correlationId: string },
): void {
  const { run, item } = created;
  let started = false;
  const execution = deps.runs.execute({
    runId: run.id,
    messageId: item.id,
    conversationId: run.conversation_id,
    principal: created.principal,
    correlationId: created.correlationId,
    endpoint: 'threads',
    stream: run.params.stream === true,
    model: run.model,
    messages: [],
    maxTokens: run.params.max_tokens ?? DEFAULT_MAX_TOKENS,
    temperature: run.params.temperature ?? DEFAULT_TEMPERATURE,
    expiresAt: run.expires_at,
    onStarted(row) {
      started = true;
      for (const e of startEvents(row, item)) feed.emit(e.event, e.data);
    },
    prepare: () => promptOf(deps, run),
    onDelta(text) {
      feed.emit(DELTA, deltaOf(item.id, text));
    },
    async onFinished(outcome) {
      // The run's row as ended; re-read when it had ended elsewhere (cancelled while queued).
      const ended = outcome.run ?? (await runRepository.byId(deps.db, run.id));
      if (ended) for (const e of endEvents(ended, outcome.item, started)) feed.emit(e.event, e.data);
      else feed.emit('error', { error: { type: 'server_error', message: 'The thread was deleted while its run was executing.' } });
      await feed.end();
    },
  });
  execution.catch(async (error: unknown) => {
    deps.logError(error, 'a thread run could not be executed');
    feed.emit('error', { error: { type: 'server_error', message: 'The run failed: an internal error occurred.' } });
    await feed.end();
  });
}

/** The messages of the run's prompt, grounded when the run has a scope. */
async function promptOf(deps: ExecutionDeps, run: RunRow): Promise<{ messages: ChatMessage[]; grounding?: Grounding }> {
  const maxTokens = run.params.max_tokens ?? DEFAULT_MAX_TOKENS;
  const scope = run.params.grounding;
  const grounded = hasScope(scope);
  const budgetTokens = historyBudget(deps.grounding.contextTokens, maxTokens, grounded);
  const system = systemOf(run);
  const messages = await windowOf(deps.db, run.tenant_id, run.conversation_id, { ...(system ? { system } : {}), budgetTokens });
  // Retrieval searches for the last user message: a thread without one is answered ungrounded.
  if (!grounded || !messages.some((m) => m.role === 'user')) return { messages };
  return ground(deps.grounding, run.tenant_id, scope!, messages, maxTokens);
}

/** The run's instructions (the assistant's unless the run replaced them), then its additional instructions. */
export function systemOf(run: RunRow): string | undefined {
  const parts = [run.instructions, run.params.additional_instructions].filter((p): p is string => !!p && p.trim() !== '');
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

export const hasScope = (scope: StoredScope | undefined | null): boolean =>
  (scope?.workspaceIds?.length ?? 0) + (scope?.collectionIds?.length ?? 0) > 0;
