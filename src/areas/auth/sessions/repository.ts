// SQL for refresh tokens. Tokens are stored only as keyed hashes; a family is
// the chain of tokens descending from one login, revoked together.
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
}

export const refreshTokenRepository = {
  async insert(q: Queryable, row: Pick<RefreshTokenRow, 'id' | 'family_id' | 'user_id' | 'token_hash' | 'expires_at'>) {
    const [created] = await q.query<RefreshTokenRow>(
      `INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [row.id, row.family_id, row.user_id, row.token_hash, row.expires_at],
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

  /** Ends every session of a user (password reset, disable). */
  async revokeAllForUser(q: Queryable, userId: string) {
    await q.query('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  },
};
