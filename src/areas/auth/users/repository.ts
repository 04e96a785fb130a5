import type { Queryable } from '../../../platform/db/database.js';
import type { RoleName } from '../../../platform/identity.js';

export interface UserRow {
  id: string;
  tenant_id: string;
  username: string;
  email: string | null;
  /** Whether the address was verified (by an administrator, or by the IdP of an SSO sign-in that created the user): linking by e-mail needs it. */
  email_verified: boolean;
  password_hash: string;
  roles: RoleName[];
  status: 'active' | 'disabled';
  totp_secret: string | null;
  totp_enabled: boolean;
  totp_last_step: number | null;
  /** SCIM (0018): the identity provider's id of the person, case-exact, unique in the tenant. */
  external_id: string | null;
  /** NULL: a local account; 'scim': created by the tenant's SCIM client, managed by it. */
  provisioned_by: string | null;
  display_name: string | null;
  scim_profile: Record<string, unknown>;
  /** Access tokens of an earlier epoch are refused (account-state.ts). */
  session_epoch: number;
  created_at: Date;
  updated_at: Date;
}

// The search of a page and of its count: parameter $n is the ILIKE pattern (paging.ts escapes it), or null for none.
const matches = (n: number) => `($${n}::text IS NULL OR username ILIKE $${n} ESCAPE '\\' OR email ILIKE $${n} ESCAPE '\\')`;

export const userRepository = {
  async insert(
    q: Queryable,
    row: Pick<UserRow, 'id' | 'tenant_id' | 'username' | 'email' | 'password_hash' | 'roles'> & Partial<Pick<UserRow, 'email_verified'>>,
  ) {
    const [created] = await q.query<UserRow>(
      `INSERT INTO users (id, tenant_id, username, email, password_hash, roles, email_verified)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [row.id, row.tenant_id, row.username, row.email, row.password_hash, row.roles, row.email_verified ?? false],
    );
    return created!;
  },

  /**
   * Login accepts a username or an e-mail address in one field. A login with an @ is an
   * e-mail address, or the username of a SCIM-provisioned account (the identity
   * provider's userName, a UPN such as bob@corp.example): an e-mail address wins, and
   * SCIM refuses a userName that is another account's e-mail address (scim/users.ts).
   */
  async findByLogin(q: Queryable, login: string) {
    const [row] = await q.query<UserRow>(
      login.includes('@')
        ? `SELECT * FROM users WHERE lower(email) = lower($1) OR lower(username) = lower($1)
            ORDER BY (lower(email) IS NOT DISTINCT FROM lower($1)) DESC LIMIT 1`
        : 'SELECT * FROM users WHERE lower(username) = lower($1)',
      [login],
    );
    return row;
  },

  /**
   * Whether `email` is another account's username: a SCIM-provisioned username may be
   * e-mail-shaped (scim/users.ts), and one sign-in name must find one account.
   */
  async emailIsAUsername(q: Queryable, email: string, exceptUserId: string | null) {
    const rows = await q.query('SELECT 1 FROM users WHERE lower(username) = lower($1) AND ($2::text IS NULL OR id <> $2)', [
      email,
      exceptUserId,
    ]);
    return rows.length > 0;
  },

  async get(q: Queryable, id: string) {
    const [row] = await q.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    return row;
  },

  async getInTenant(q: Queryable, tenantId: string, id: string) {
    const [row] = await q.query<UserRow>('SELECT * FROM users WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return row;
  },

  listInTenant(q: Queryable, tenantId: string) {
    return q.query<UserRow>('SELECT * FROM users WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  },

  /** Users in id order (oldest first) after the cursor, `pattern` (ILIKE) matching the username or e-mail address. */
  pageInTenant(q: Queryable, tenantId: string, page: { limit: number | null; after: string | null; pattern: string | null }) {
    return q.query<UserRow>(
      `SELECT * FROM users WHERE tenant_id = $1 AND ($2::text IS NULL OR id > $2) AND ${matches(3)}
       ORDER BY id LIMIT $4::int`,
      [tenantId, page.after, page.pattern, page.limit],
    );
  },

  async countInTenant(q: Queryable, tenantId: string, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE tenant_id = $1 AND ${matches(2)}`, [
      tenantId,
      pattern,
    ]);
    return row!.n;
  },

  async update(
    q: Queryable,
    tenantId: string,
    id: string,
    patch: {
      email?: string | null;
      email_verified?: boolean;
      roles?: RoleName[];
      status?: UserRow['status'];
      password_hash?: string;
    },
  ) {
    // No address is a verified one.
    const [row] = await q.query<UserRow>(
      `UPDATE users SET
         email = CASE WHEN $3::boolean THEN $4 ELSE email END,
         roles = COALESCE($5, roles),
         status = COALESCE($6, status),
         password_hash = COALESCE($7, password_hash),
         email_verified = COALESCE($8, email_verified) AND (CASE WHEN $3::boolean THEN $4 ELSE email END) IS NOT NULL,
         updated_at = now()
       WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [
        tenantId,
        id,
        patch.email !== undefined,
        patch.email ?? null,
        patch.roles ?? null,
        patch.status ?? null,
        patch.password_hash ?? null,
        patch.email_verified ?? null,
      ],
    );
    return row;
  },
};
