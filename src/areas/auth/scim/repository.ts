// SQL of SCIM provisioning: the tenant's SCIM-provisioned users (provisioned_by =
// 'scim'; local accounts are invisible here), groups and their members. Every
// statement filters by the tenant of the SCIM token.
import type { Queryable } from '../../../platform/db/database.js';
import type { UserRow } from '../users/repository.js';

export interface ScimUserChanges {
  username: string;
  email: string | null;
  external_id: string | null;
  display_name: string | null;
  scim_profile: Record<string, unknown>;
  status?: 'active' | 'disabled';
  password_hash?: string;
}

export interface GroupRow {
  id: string;
  tenant_id: string;
  display_name: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  group_id: string;
  user_id: string;
  username: string;
}

export type UserFilter = { attribute: 'userName' | 'externalId' | 'emails.value' | 'displayName'; value: string };
export type GroupFilter = { attribute: 'displayName' | 'externalId'; value: string };

// Each filter term as SQL on parameter $n; caseExact false compares lowercased (RFC 7643 §2.2).
const USER_TERMS: Record<UserFilter['attribute'], (n: number) => string> = {
  userName: (n) => `lower(username) = lower($${n})`,
  externalId: (n) => `external_id = $${n}`,
  'emails.value': (n) =>
    `(lower(email) = lower($${n}) OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(scim_profile->'emails') = 'array' THEN scim_profile->'emails' ELSE '[]'::jsonb END) AS e WHERE lower(e->>'value') = lower($${n})))`,
  displayName: (n) => `lower(display_name) = lower($${n})`,
};
const GROUP_TERMS: Record<GroupFilter['attribute'], (n: number) => string> = {
  displayName: (n) => `lower(display_name) = lower($${n})`,
  externalId: (n) => `external_id = $${n}`,
};

function where<F extends { attribute: string; value: string }>(terms: Record<string, (n: number) => string>, filters: F[], first: number) {
  return {
    sql: filters.map((f, i) => ` AND ${terms[f.attribute]!(first + i)}`).join(''),
    values: filters.map((f) => f.value),
  };
}

// A provisioned address counts as verified: it comes from the tenant's own directory, over
// the tenant's own SCIM token (SSO links on it only where the IdP says it verified it too).
export const scimRepository = {
  async insertUser(
    q: Queryable,
    row: ScimUserChanges & { id: string; tenant_id: string; password_hash: string; status: 'active' | 'disabled' },
  ) {
    const [created] = await q.query<UserRow>(
      `INSERT INTO users (id, tenant_id, username, email, email_verified, password_hash, roles, status, external_id, provisioned_by, display_name, scim_profile)
       VALUES ($1, $2, $3, $4, $4::text IS NOT NULL, $5, ARRAY['member'], $6, $7, 'scim', $8, $9::jsonb) RETURNING *`,
      [
        row.id,
        row.tenant_id,
        row.username,
        row.email,
        row.password_hash,
        row.status,
        row.external_id,
        row.display_name,
        JSON.stringify(row.scim_profile),
      ],
    );
    return created!;
  },

  async getUser(q: Queryable, tenantId: string, id: string) {
    const [row] = await q.query<UserRow>(`SELECT * FROM users WHERE tenant_id = $1 AND id = $2 AND provisioned_by = 'scim'`, [
      tenantId,
      id,
    ]);
    return row;
  },

  /** The page (`offset`, `limit`) of the tenant's SCIM users that match every filter, in id order, and how many match in all. */
  async listUsers(q: Queryable, tenantId: string, filters: UserFilter[], offset: number, limit: number) {
    const { sql, values } = where(USER_TERMS, filters, 2);
    const base = `FROM users WHERE tenant_id = $1 AND provisioned_by = 'scim'${sql}`;
    const [count] = await q.query<{ n: number }>(`SELECT count(*)::int AS n ${base}`, [tenantId, ...values]);
    const rows =
      limit === 0
        ? []
        : await q.query<UserRow>(`SELECT * ${base} ORDER BY id OFFSET $${values.length + 2} LIMIT $${values.length + 3}`, [
            tenantId,
            ...values,
            offset,
            limit,
          ]);
    return { total: count!.n, rows };
  },

  async updateUser(q: Queryable, tenantId: string, id: string, changes: ScimUserChanges) {
    const [row] = await q.query<UserRow>(
      `UPDATE users SET username = $3, email = $4, email_verified = $4::text IS NOT NULL, external_id = $5, display_name = $6, scim_profile = $7::jsonb,
              status = COALESCE($8, status), password_hash = COALESCE($9, password_hash), updated_at = now()
        WHERE tenant_id = $1 AND id = $2 AND provisioned_by = 'scim' RETURNING *`,
      [
        tenantId,
        id,
        changes.username,
        changes.email,
        changes.external_id,
        changes.display_name,
        JSON.stringify(changes.scim_profile),
        changes.status ?? null,
        changes.password_hash ?? null,
      ],
    );
    return row;
  },

  async deleteUser(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query(`DELETE FROM users WHERE tenant_id = $1 AND id = $2 AND provisioned_by = 'scim' RETURNING id`, [
      tenantId,
      id,
    ]);
    return rows.length > 0;
  },

  /**
   * Another account (of any tenant) that a login of `login` would find: its username or
   * its e-mail address, in any case. Usernames and addresses are unique platform-wide,
   * because sign-in names no tenant.
   */
  async loginTaken(q: Queryable, login: string, exceptUserId: string | null) {
    const rows = await q.query<{ id: string }>(
      `SELECT id FROM users WHERE (lower(username) = lower($1) OR lower(email) = lower($1)) AND ($2::text IS NULL OR id <> $2) LIMIT 1`,
      [login, exceptUserId],
    );
    return rows.length > 0;
  },

  async externalIdTaken(q: Queryable, tenantId: string, externalId: string, exceptUserId: string | null) {
    const rows = await q.query(`SELECT 1 FROM users WHERE tenant_id = $1 AND external_id = $2 AND ($3::text IS NULL OR id <> $3)`, [
      tenantId,
      externalId,
      exceptUserId,
    ]);
    return rows.length > 0;
  },

  /** Ends a user's credentials for good: a new session epoch (access tokens issued before are refused). */
  async bumpSessionEpoch(q: Queryable, userId: string) {
    await q.query('UPDATE users SET session_epoch = session_epoch + 1 WHERE id = $1', [userId]);
  },

  async setRoles(q: Queryable, tenantId: string, userId: string, roles: string[]) {
    await q.query('UPDATE users SET roles = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenantId, userId, roles]);
  },

  /** Of `ids`, those that are SCIM users of the tenant (members may be nothing else). */
  async scimUserIds(q: Queryable, tenantId: string, ids: string[]) {
    const rows = await q.query<{ id: string }>(
      `SELECT id FROM users WHERE tenant_id = $1 AND provisioned_by = 'scim' AND id = ANY($2::text[])`,
      [tenantId, ids],
    );
    return new Set(rows.map((r) => r.id));
  },

  /** The groups of each of `userIds` (id and display name). */
  groupsOfUsers(q: Queryable, tenantId: string, userIds: string[]) {
    return q.query<{ user_id: string; id: string; display_name: string }>(
      `SELECT m.user_id, g.id, g.display_name FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id
        WHERE g.tenant_id = $1 AND m.user_id = ANY($2::text[]) ORDER BY g.id`,
      [tenantId, userIds],
    );
  },

  async insertGroup(q: Queryable, row: Pick<GroupRow, 'id' | 'tenant_id' | 'display_name' | 'external_id'>) {
    const [created] = await q.query<GroupRow>(
      'INSERT INTO scim_groups (id, tenant_id, display_name, external_id) VALUES ($1, $2, $3, $4) RETURNING *',
      [row.id, row.tenant_id, row.display_name, row.external_id],
    );
    return created!;
  },

  async getGroup(q: Queryable, tenantId: string, id: string, forUpdate = false) {
    const [row] = await q.query<GroupRow>(`SELECT * FROM scim_groups WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
      tenantId,
      id,
    ]);
    return row;
  },

  async listGroups(q: Queryable, tenantId: string, filters: GroupFilter[], offset: number, limit: number) {
    const { sql, values } = where(GROUP_TERMS, filters, 2);
    const base = `FROM scim_groups WHERE tenant_id = $1${sql}`;
    const [count] = await q.query<{ n: number }>(`SELECT count(*)::int AS n ${base}`, [tenantId, ...values]);
    const rows =
      limit === 0
        ? []
        : await q.query<GroupRow>(`SELECT * ${base} ORDER BY id OFFSET $${values.length + 2} LIMIT $${values.length + 3}`, [
            tenantId,
            ...values,
            offset,
            limit,
          ]);
    return { total: count!.n, rows };
  },

  async updateGroup(q: Queryable, tenantId: string, id: string, changes: Pick<GroupRow, 'display_name' | 'external_id'>) {
    const [row] = await q.query<GroupRow>(
      'UPDATE scim_groups SET display_name = $3, external_id = $4, updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING *',
      [tenantId, id, changes.display_name, changes.external_id],
    );
    return row;
  },

  async deleteGroup(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM scim_groups WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },

  /** The members of `groupIds` with their usernames (the members' `display`). */
  members(q: Queryable, groupIds: string[]) {
    return q.query<MemberRow>(
      `SELECT m.group_id, m.user_id, u.username FROM scim_group_members m JOIN users u ON u.id = m.user_id
        WHERE m.group_id = ANY($1::text[]) ORDER BY m.user_id`,
      [groupIds],
    );
  },

  async addMembers(q: Queryable, groupId: string, userIds: string[]) {
    if (userIds.length === 0) return;
    await q.query('INSERT INTO scim_group_members (group_id, user_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [
      groupId,
      userIds,
    ]);
  },

  async removeMembers(q: Queryable, groupId: string, userIds: string[]) {
    if (userIds.length === 0) return;
    await q.query('DELETE FROM scim_group_members WHERE group_id = $1 AND user_id = ANY($2::text[])', [groupId, userIds]);
  },

  async groupNameTaken(q: Queryable, tenantId: string, displayName: string, exceptGroupId: string | null) {
    const rows = await q.query(
      'SELECT 1 FROM scim_groups WHERE tenant_id = $1 AND lower(display_name) = lower($2) AND ($3::text IS NULL OR id <> $3)',
      [tenantId, displayName, exceptGroupId],
    );
    return rows.length > 0;
  },

  async groupExternalIdTaken(q: Queryable, tenantId: string, externalId: string, exceptGroupId: string | null) {
    const rows = await q.query('SELECT 1 FROM scim_groups WHERE tenant_id = $1 AND external_id = $2 AND ($3::text IS NULL OR id <> $3)', [
      tenantId,
      externalId,
      exceptGroupId,
    ]);
    return rows.length > 0;
  },
};
