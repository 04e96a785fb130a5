// SQL for two-factor: the users' TOTP columns and recovery codes (login challenges
// are the sessions feature's). Every "use once" rule is a single conditional
// UPDATE, so two requests racing with the same code cannot both win.
import type { Queryable } from '../../../platform/db/database.js';

export const twoFactorRepository = {
  /** Stores a new, not yet enabled secret (setup); refuses while 2FA is on. */
  async setPendingSecret(q: Queryable, userId: string, encryptedSecret: string) {
    const rows = await q.query(
      `UPDATE users SET totp_secret = $2, totp_last_step = NULL, updated_at = now()
        WHERE id = $1 AND NOT totp_enabled RETURNING id`,
      [userId, encryptedSecret],
    );
    return rows.length > 0;
  },

  async enable(q: Queryable, userId: string) {
    const rows = await q.query(
      `UPDATE users SET totp_enabled = true, updated_at = now()
        WHERE id = $1 AND NOT totp_enabled AND totp_secret IS NOT NULL RETURNING id`,
      [userId],
    );
    return rows.length > 0;
  },

  async disable(q: Queryable, userId: string) {
    await q.query(`UPDATE users SET totp_enabled = false, totp_secret = NULL, totp_last_step = NULL, updated_at = now() WHERE id = $1`, [
      userId,
    ]);
    await q.query('DELETE FROM recovery_codes WHERE user_id = $1', [userId]);
  },

  /** Accepts a TOTP time step only if it is later than the last one used: a code works once. */
  async advanceStep(q: Queryable, userId: string, step: number) {
    const rows = await q.query(
      `UPDATE users SET totp_last_step = $2
        WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`,
      [userId, step],
    );
    return rows.length > 0;
  },

  async replaceRecoveryCodes(q: Queryable, userId: string, codeHashes: string[]) {
    await q.query('DELETE FROM recovery_codes WHERE user_id = $1', [userId]);
    await q.query('INSERT INTO recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [userId, codeHashes]);
  },

  async useRecoveryCode(q: Queryable, userId: string, codeHash: string) {
    const rows = await q.query(
      'UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING user_id',
      [userId, codeHash],
    );
    return rows.length > 0;
  },
};
