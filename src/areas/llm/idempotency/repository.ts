// SQL for `Idempotency-Key` (idempotency.ts): one row per (tenant, owner, key), claimed
// by the first request, completed with the id of what it created, released if it failed.
import type { Queryable } from '../../../platform/db/database.js';

export interface IdempotencyRow {
  fingerprint: string;
  resource_id: string | null;
  /** created_at as PostgreSQL prints it: the claim's token, exact to the microsecond (a Date would round it). */
  claim: string;
}

export interface KeyRef {
  tenantId: string;
  owner: string;
  key: string;
}

export const idempotencyRepository = {
  /**
   * Claims the key for a request (the claim's token), or undefined when another request
   * holds it: a row past `ttlSeconds`, or one still pending after `pendingSeconds` (its
   * process died mid-create), counts as absent and is taken over.
   */
  async claim(q: Queryable, ref: KeyRef, fingerprint: string, ttlSeconds: number, pendingSeconds: number): Promise<string | undefined> {
    const [row] = await q.query<{ claim: string }>(
      `INSERT INTO idempotency_keys (tenant_id, owner, key, fingerprint) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, owner, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, resource_id = NULL, created_at = now()
        WHERE idempotency_keys.created_at < now() - make_interval(secs => $5)
           OR (idempotency_keys.resource_id IS NULL AND idempotency_keys.created_at < now() - make_interval(secs => $6))
       RETURNING created_at::text AS claim`,
      [ref.tenantId, ref.owner, ref.key, fingerprint, ttlSeconds, pendingSeconds],
    );
    return row?.claim;
  },

  async get(q: Queryable, ref: KeyRef): Promise<IdempotencyRow | undefined> {
    const [row] = await q.query<IdempotencyRow>(
      'SELECT fingerprint, resource_id, created_at::text AS claim FROM idempotency_keys WHERE tenant_id = $1 AND owner = $2 AND key = $3',
      [ref.tenantId, ref.owner, ref.key],
    );
    return row;
  },

  /** Records what the claim created (nothing when the claim was taken over meanwhile). */
  async complete(q: Queryable, ref: KeyRef, claim: string, resourceId: string): Promise<void> {
    await q.query(
      'UPDATE idempotency_keys SET resource_id = $5 WHERE tenant_id = $1 AND owner = $2 AND key = $3 AND created_at = $4::timestamptz',
      [ref.tenantId, ref.owner, ref.key, claim, resourceId],
    );
  },

  /** Gives a failed create's key back, so a retry can succeed. */
  async release(q: Queryable, ref: KeyRef, claim: string): Promise<void> {
    await q.query(
      'DELETE FROM idempotency_keys WHERE tenant_id = $1 AND owner = $2 AND key = $3 AND created_at = $4::timestamptz AND resource_id IS NULL',
      [ref.tenantId, ref.owner, ref.key, claim],
    );
  },

  /** Drops the owner's rows past the time they are kept. */
  async purge(q: Queryable, tenantId: string, owner: string, ttlSeconds: number): Promise<void> {
    await q.query('DELETE FROM idempotency_keys WHERE tenant_id = $1 AND owner = $2 AND created_at < now() - make_interval(secs => $3)', [
      tenantId,
      owner,
      ttlSeconds,
    ]);
  },
};
