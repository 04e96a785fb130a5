// Where an in-process gateway's database time goes, statement by statement: wraps
// `pg`'s Client.query (the one driver both the embedded and the PostgreSQL database
// are reached through) and sums the time from sending to the answer per statement
// shape (its first 90 characters, whitespace folded). On the embedded database one
// statement runs at a time, so these times add up to the database thread's work.
// For benchmarks only: install() before the gateway starts.
import pg from 'pg';

interface Entry {
  calls: number;
  ms: number;
  rows: number;
}

const entries = new Map<string, Entry>();
let installed = false;

export function installSqlProfile(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = original.apply(this, args);
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string })?.text ?? '?');
    if (!(result instanceof Promise)) return result;
    const started = performance.now();
    return result.then((answer: { rowCount?: number | null }) => {
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
      const entry = entries.get(key) ?? { calls: 0, ms: 0, rows: 0 };
      entry.calls++;
      entry.ms += performance.now() - started;
      entry.rows += answer?.rowCount ?? 0;
      entries.set(key, entry);
      return answer;
    });
  } as typeof pg.Client.prototype.query;
}

export function resetSqlProfile(): void {
  entries.clear();
}

/** The statements with the most time, with the number of chunks the time is divided by. */
export function printSqlProfile(chunks: number, top = 20): void {
  const sorted = [...entries].sort((a, b) => b[1].ms - a[1].ms);
  const total = sorted.reduce((sum, [, e]) => sum + e.ms, 0);
  console.log(
    `SQL time: ${(total / 1000).toFixed(1)} s in ${sorted.reduce((s, [, e]) => s + e.calls, 0)} statements; per chunk over ${chunks} chunks:`,
  );
  for (const [sql, e] of sorted.slice(0, top))
    console.log(
      `${(e.ms / 1000).toFixed(2).padStart(7)} s ${((e.ms / total) * 100).toFixed(1).padStart(5)} % ${(e.ms / chunks).toFixed(2).padStart(6)} ms/chunk ×${String(e.calls).padStart(5)}  ${sql}`,
    );
}
