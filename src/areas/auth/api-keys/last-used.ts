// Records when each key was last used without a database write per request:
// uses are collected in memory and written in one statement every few seconds.
import type { Database } from '../../../platform/db/database.js';

export class LastUsedRecorder {
  private pending = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    flushSeconds: number,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), flushSeconds * 1000).unref();
  }

  touch(keyId: string): void {
    this.pending.set(keyId, new Date());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await this.db.query(
      `UPDATE api_keys AS k SET last_used_at = u.used_at
         FROM (SELECT unnest($1::text[]) AS id, unnest($2::timestamptz[]) AS used_at) AS u
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at)`,
      [[...batch.keys()], [...batch.values()]],
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(() => undefined);
  }
}
