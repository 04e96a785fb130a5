// Saves a running generation's growing answer into its item, so that a crash loses
// at most one interval of it.
import type { Database } from '../../../platform/db/database.js';
import { itemRepository } from '../history/repository.js';

/**
 * Saves the growing answer at most once per interval, never two writes at a time
 * and never on the token path (the write is not awaited there).
 */
export class ProgressSaver {
  private last = 0;
  private saving: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly itemId: string,
    private readonly intervalMs: number,
  ) {
    this.last = Date.now();
  }

  grew(content: string): void {
    const now = Date.now();
    if (this.saving || now - this.last < this.intervalMs) return;
    this.last = now;
    this.saving = itemRepository
      .saveProgress(this.db, this.itemId, content)
      .catch(() => undefined) // the final write has it all anyway
      .finally(() => {
        this.saving = undefined;
      });
  }

  idle(): Promise<void> {
    return this.saving ?? Promise.resolve();
  }
}
