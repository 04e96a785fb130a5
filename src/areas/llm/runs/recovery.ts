// Runs nobody is executing any more end as failed rather than stay in_progress for
// ever: at start, every open run on the embedded database (its data-dir lock proves
// no other process holds one); on PostgreSQL, the runs whose lease ran out (their
// process died), checked at start and then periodically. The item keeps what had
// been saved of the answer, marked incomplete, and the thread takes runs again.
import type { Database } from '../../../platform/db/database.js';
import { conversationRepository, itemRepository } from '../history/repository.js';
import { runRepository, type RunRow } from './repository.js';

export const INTERRUPTED_MESSAGE = 'The run was interrupted: the server executing it stopped. Start a new run.';

/** Ends abandoned runs; returns them as they were found. `all`: every open run (embedded, at start). */
export async function endAbandonedRuns(db: Database, all: boolean): Promise<RunRow[]> {
  const found = await runRepository.abandoned(db, all);
  for (const run of found) {
    await db.tx(async (q) => {
      // Unless every open run is abandoned (embedded, at start), only while its lease is
      // still out: a slow replica that renewed it since the read keeps its run.
      const ended = await runRepository.finish(
        q,
        run.id,
        { status: 'failed', lastError: { code: 'server_error', message: INTERRUPTED_MESSAGE } },
        !all,
      );
      if (!ended) return; // its process finished (or renewed) it meanwhile
      if (run.message_id) {
        const item = await itemRepository.byId(q, run.message_id);
        if (item)
          await itemRepository.finish(q, run.message_id, { content: item.content, status: 'incomplete', incompleteReason: 'run_failed' });
      }
      await conversationRepository.releaseActiveRun(q, run.conversation_id, run.id);
      // A response asked with `store: false` (llm/responses) keeps nothing, even when its process died.
      if ((run.params as { store?: boolean }).store === false)
        await conversationRepository.delete(q, run.tenant_id, run.owner, 'response', run.conversation_id);
    });
  }
  return found;
}

/** Starts the periodic sweep (PostgreSQL: replicas come and go); returns its stop. */
export function sweepAbandonedRuns(db: Database, everyMs: number, onError: (error: Error) => void): () => void {
  const timer = setInterval(() => {
    endAbandonedRuns(db, false).catch((error: Error) => onError(error));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
