// Versioned SQL migrations from ./migrations, applied in order at start.
// A migration whose first line is `-- requires: vector` is held back while the
// pgvector extension is missing (PostgreSQL without pgvector), and applied on a
// later start once it is there.
import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from './database.js';

export const MIGRATIONS_DIR = new URL('../../../migrations/', import.meta.url);
const LOCK_ID = 7_242_001; // advisory lock: one replica migrates at a time

export interface MigrationResult {
  applied: string[];
  heldBack: string[];
  vector: boolean;
}

export async function migrate(
  db: Database,
  log: (message: string) => void = () => {},
  dir: URL = MIGRATIONS_DIR,
): Promise<MigrationResult> {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await q.query('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const vector = await ensureVector(q);
    const done = new Set((await q.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const result: MigrationResult = { applied: [], heldBack: [], vector };
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      const sql = readFileSync(new URL(file, dir), 'utf8');
      if (!vector && /^--\s*requires:\s*vector/.test(sql)) {
        result.heldBack.push(version);
        continue;
      }
      await q.query(sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      result.applied.push(version);
      log(`applied migration ${version}`);
    }
    return result;
  });
}

async function ensureVector(q: Pick<Database, 'query'>): Promise<boolean> {
  const available = await q.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (available.length === 0) return false;
  await q.query('CREATE EXTENSION IF NOT EXISTS vector');
  return true;
}
