// SQL for refresh tokens and the login challenges of two-factor users. Both are
// stored only as keyed hashes. A family is the chain of refresh tokens descending
// from one login, revoked together. Every "use once" rule of a challenge is a
// single conditional UPDATE, so two requests racing with it cannot both win.
import type { Queryable } from '../../../platform/db/database.js';

export interface RefreshTokenRow {
  id: string;
  family_id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  /** The client that signed the session in (0013): null for sessions from before it was recorded. */
  user_agent: string | null;
  address: string | null;
}

/** A signed-in session: one refresh-token family with a live token, as its newest token describes it. */
export interface SessionRow {
  id: string;
  created_at: Date;
  last_used_at: Date;
  expires_at: Date;
  user_agent: string | null;
  address: string | null;
}

// A family is live while it holds a token neither rotated, revoked nor expired.
const LIVE = 'revoked_at IS NULL AND rotated_at IS NULL AND expires_at > now()';

export interface ChallengeRow {
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Date;
  attempts: number;
  consumed_at: Date | null;
}

export const refreshTokenRepository = {
  async insert(
    q: Queryable,
    row: Pick<RefreshTokenRow, 'id' | 'family_id' | 'user_id' | 'token_hash' | 'expires_at'> &
      Partial<Pick<RefreshTokenRow, 'user_agent' | 'address'>>,
  ) {
    const [created] = await q.query<RefreshTokenRow>(
      `INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at, user_agent, address)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [row.id, row.family_id, row.user_id, row.token_hash, row.expires_at, row.user_agent ?? null, row.address ?? null],
    );
    return created!;
  },

  async findByHash(q: Queryable, tokenHash: string) {
    const [row] = await q.query<RefreshTokenRow>('SELECT * FROM refresh_tokens WHERE token_hash = $1', [tokenHash]);
    return row;
  },

  /**
   * Marks a live token rotated, atomically: of two requests racing with the same
   * token, the row lock makes the second see the first's rotated_at. A token
   * already rotated within the grace period is handed back again (the race
   * policy), keeping its original rotated_at so the grace period never extends.
   * Returns nothing for an unknown, expired, revoked, or rotated-too-long-ago token.
   */
  async rotate(q: Queryable, tokenHash: string, graceSeconds: number) {
    const [row] = await q.query<RefreshTokenRow>(
      `UPDATE refresh_tokens SET rotated_at = COALESCE(rotated_at, now())
        WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
          AND (rotated_at IS NULL OR rotated_at > now() - make_interval(secs => $2))
        RETURNING *`,
      [tokenHash, graceSeconds],
    );
    return row;
  },

  /** Housekeeping at each login: a user's long-expired tokens can never be used again. */
  async deleteExpired(q: Queryable, userId: string) {
    await q.query(`DELETE FROM refresh_tokens WHERE user_id = $1 AND expires_at < now() - interval '1 day'`, [userId]);
  },

  async revokeFamily(q: Queryable, familyId: string) {
    await q.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [familyId]);
  },

  /** Ends every session of a user (password reset, disable, sign-out everywhere), but for `keepFamilyId` when given. */
  async revokeAllForUser(q: Queryable, userId: string, keepFamilyId: string | null = null) {
    await q.query(
      'UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR family_id <> $2)',
      [userId, keepFamilyId],
    );
  },

  /** The user's live sessions, most recently used first: started at the first token, used at the newest. */
  liveSessions(q: Queryable, userId: string) {
    return q.query<SessionRow>(
      `SELECT family_id AS id, min(created_at) AS created_at, max(created_at) AS last_used_at, max(expires_at) AS expires_at,
              (array_agg(user_agent ORDER BY created_at DESC, id DESC))[1] AS user_agent,
              (array_agg(address ORDER BY created_at DESC, id DESC))[1] AS address
         FROM refresh_tokens WHERE user_id = $1
        GROUP BY family_id
       HAVING bool_or(${LIVE})
        ORDER BY max(created_at) DESC, family_id DESC`,
      [userId],
    );
  },

  /** Ends one live session of the user; false when the user has no such live session (another's, ended, unknown). */
  async revokeLiveFamily(q: Queryable, userId: string, familyId: string) {
    const rows = await q.query(
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE user_id = $1 AND family_id = $2 AND revoked_at IS NULL
          AND EXISTS (SELECT 1 FROM refresh_tokens WHERE user_id = $1 AND family_id = $2 AND ${LIVE})
        RETURNING id`,
      [userId, familyId],
    );
    return rows.length > 0;
  },
};

export const challengeRepository = {
  async insert(q: Queryable, row: Pick<ChallengeRow, 'id' | 'user_id' | 'token_hash' | 'expires_at'>) {
    await q.query('INSERT INTO two_factor_challenges (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)', [
      row.id,
      row.user_id,
      row.token_hash,
      row.expires_at,
    ]);
  },

  /**
   * Counts one attempt against a live challenge and returns it; nothing once the
   * challenge is consumed, expired, or has used up its attempts.
   */
  async spendAttempt(q: Queryable, tokenHash: string, maxAttempts: number) {
    const [row] = await q.query<ChallengeRow>(
      `UPDATE two_factor_challenges SET attempts = attempts + 1
        WHERE token_hash = $1 AND consumed_at IS NULL AND expires_at > now() AND attempts < $2
        RETURNING *`,
      [tokenHash, maxAttempts],
    );
    return row;
  },

  async consume(q: Queryable, id: string) {
    const rows = await q.query('UPDATE two_factor_challenges SET consumed_at = now() WHERE id = $1 AND consumed_at IS NULL RETURNING id', [
      id,
    ]);
    return rows.length > 0;
  },

  /** Every challenge of the user still open stops working (two-factor turned off). */
  async consumeAllForUser(q: Queryable, userId: string) {
    await q.query('UPDATE two_factor_challenges SET consumed_at = now() WHERE user_id = $1 AND consumed_at IS NULL', [userId]);
  },

  /** Challenges are short-lived; old ones are dropped when new ones are made. */
  async deleteStale(q: Queryable, userId: string) {
    await q.query(`DELETE FROM two_factor_challenges WHERE user_id = $1 AND expires_at < now() - interval '1 day'`, [userId]);
  },
};
