// The database handle the rest of the code uses: PostgreSQL dialect over `pg`,
// whether the server is the embedded PGlite worker or a real PostgreSQL.
import pg from 'pg';
import { startEmbeddedDatabase, EMBEDDED_PORT, type EmbeddedDatabase } from './embedded.js';

// Timestamps come back as Date; int8 counts as numbers (they stay far below 2^53 here).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Queries issued through this handle since start: lets tests prove a path does no database work. */
  readonly stats: { queries: number };
  readonly kind: 'embedded' | 'postgres';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  poolSize?: number;
  /** Embedded only: called if the database thread dies on its own. */
  onCrash?: (error: Error) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    return wrap(pool, 'postgres', async () => pool.end());
  }
  const embedded: EmbeddedDatabase = await startEmbeddedDatabase(options.dataDir, options.onCrash);
  // One connection: pglite-socket runs every connection's queries on the one PGlite
  // session, so a second connection would interleave with a running transaction.
  const pool = new pg.Pool({ host: embedded.socketDir, port: EMBEDDED_PORT, user: 'postgres', database: 'postgres', max: 1 });
  return wrap(pool, 'embedded', async () => {
    await pool.end();
    await embedded.stop();
  });
}

function wrap(pool: pg.Pool, kind: Database['kind'], close: () => Promise<void>): Database {
  const stats = { queries: 0 };
  pool.on('error', (error) => console.error('Database connection error:', error.message));
  const runner = (client: pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      stats.queries++;
      const result = await client.query(sql, params as unknown[]);
      return result.rows as T[];
    },
  });
  return {
    // Not pool.query: it destroys the connection after any failed statement, even a
    // unique violation, and reconnecting churns the embedded server's one session.
    // An SQL error leaves the connection healthy; only other failures discard it.
    async query<T>(sql: string, params?: unknown[]) {
      const client = await pool.connect();
      try {
        const rows = await runner(client).query<T>(sql, params);
        client.release();
        return rows;
      } catch (error) {
        client.release(isSqlError(error) ? undefined : (error as Error));
        throw error;
      }
    },
    stats,
    kind,
    async tx(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(runner(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close,
  };
}

// Errors the server reported about a statement carry an SQLSTATE; the connection is fine.
function isSqlError(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** True for a unique-constraint violation, optionally on a named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * Whether the database refused a statement for the values it carried: SQL classes 22
 * (data exception: out of range, bad encoding…) and 23 (integrity constraint
 * violation). The same values would be refused again, so retrying cannot help.
 */
export function isDataRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}
