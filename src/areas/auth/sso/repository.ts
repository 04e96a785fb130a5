// SQL for single sign-on: connections, identities, sign-in transactions, the sessions
// an SSO sign-in started, and spent back-channel logout tokens. Every "use once" rule
// (a transaction, a logout token) is a single conditional statement, so two requests
// racing with it, on one replica or two, cannot both win.
import type { Queryable } from '../../../platform/db/database.js';
import type { RoleName } from '../../../platform/identity.js';
import type { UserRow } from '../users/repository.js';
import type { MappedRole, TokenAuthMethod } from './schemas.js';

export interface ConnectionRow {
  id: string;
  tenant_id: string;
  name: string;
  issuer: string;
  url_scope: 'platform' | 'tenant';
  client_id: string;
  /** AES-256-GCM ciphertext. */
  client_secret: string;
  token_auth_method: TokenAuthMethod;
  scopes: string[];
  allowed_email_domains: string[];
  groups_claim: string;
  role_mapping: Record<string, MappedRole>;
  subject_claim: string;
  jit: boolean;
  sso_only: boolean;
  trust_idp_mfa: boolean;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a create or a change writes (the rest are the database's). */
export type ConnectionFields = Omit<ConnectionRow, 'id' | 'tenant_id' | 'created_by' | 'created_at' | 'updated_at'>;

export interface IdentityRow {
  tenant_id: string;
  issuer: string;
  subject: string;
  user_id: string;
  connection_id: string | null;
  email: string | null;
}

export interface TransactionRow {
  id: string;
  connection_id: string;
  state_hash: string;
  nonce: string;
  /** AES-256-GCM ciphertext. */
  code_verifier: string;
  return_to: string;
  expires_at: Date;
  consumed_at: Date | null;
}

export interface SsoSessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  connection_id: string;
  family_id: string | null;
  challenge_id: string | null;
  subject: string;
  sid: string | null;
  /** AES-256-GCM ciphertext. */
  id_token: string;
  expires_at: Date;
}

const COLUMNS: (keyof ConnectionFields)[] = [
  'name',
  'issuer',
  'url_scope',
  'client_id',
  'client_secret',
  'token_auth_method',
  'scopes',
  'allowed_email_domains',
  'groups_claim',
  'role_mapping',
  'subject_claim',
  'jit',
  'sso_only',
  'trust_idp_mfa',
  'enabled',
];
// jsonb wants its value as JSON text; the arrays and scalars go as they are.
const param = (column: keyof ConnectionFields, value: unknown) => (column === 'role_mapping' ? JSON.stringify(value) : value);

export const connectionRepository = {
  async insert(q: Queryable, row: Pick<ConnectionRow, 'id' | 'tenant_id' | 'created_by'> & ConnectionFields) {
    const values = COLUMNS.map((column) => param(column, row[column]));
    const [created] = await q.query<ConnectionRow>(
      `INSERT INTO sso_connections (id, tenant_id, created_by, ${COLUMNS.join(', ')})
       VALUES ($1, $2, $3, ${COLUMNS.map((_, i) => `$${i + 4}`).join(', ')}) RETURNING *`,
      [row.id, row.tenant_id, row.created_by, ...values],
    );
    return created!;
  },

  /** For sign-in, which starts from the connection's id alone: any tenant's. */
  async get(q: Queryable, id: string) {
    const [row] = await q.query<ConnectionRow>('SELECT * FROM sso_connections WHERE id = $1', [id]);
    return row;
  },

  /** A connection a sign-in may use: enabled, of an active tenant. */
  async getLive(q: Queryable, id: string) {
    const [row] = await q.query<ConnectionRow>(
      `SELECT c.* FROM sso_connections c JOIN tenants t ON t.id = c.tenant_id WHERE c.id = $1 AND c.enabled AND t.status = 'active'`,
      [id],
    );
    return row;
  },

  async getInTenant(q: Queryable, tenantId: string, id: string) {
    const [row] = await q.query<ConnectionRow>('SELECT * FROM sso_connections WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return row;
  },

  listInTenant(q: Queryable, tenantId: string) {
    return q.query<ConnectionRow>('SELECT * FROM sso_connections WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  },

  async update(q: Queryable, tenantId: string, id: string, patch: Partial<ConnectionFields>) {
    const columns = COLUMNS.filter((column) => patch[column] !== undefined);
    const sets = columns.map((column, i) => `${column} = $${i + 3}`);
    const [row] = await q.query<ConnectionRow>(
      `UPDATE sso_connections SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [tenantId, id, ...columns.map((column) => param(column, patch[column]))],
    );
    return row;
  },

  async delete(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM sso_connections WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },

  /** Enabled connections of active tenants that list `domain` (lower case), with their tenant. */
  byDomain(q: Queryable, domain: string) {
    return q.query<ConnectionRow>(
      `SELECT c.* FROM sso_connections c JOIN tenants t ON t.id = c.tenant_id
        WHERE c.enabled AND t.status = 'active' AND c.allowed_email_domains @> ARRAY[$1]::text[] ORDER BY c.id`,
      [domain],
    );
  },

  /** Whether an enabled connection of the tenant says its members sign in only through SSO. */
  async ssoOnly(q: Queryable, tenantId: string) {
    const [row] = await q.query<{ yes: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM sso_connections WHERE tenant_id = $1 AND enabled AND sso_only) AS yes',
      [tenantId],
    );
    return row!.yes;
  },

  /** Every role mapping of the tenant's enabled connections. */
  async roleMappings(q: Queryable, tenantId: string) {
    const rows = await q.query<{ role_mapping: Record<string, MappedRole> }>(
      'SELECT role_mapping FROM sso_connections WHERE tenant_id = $1 AND enabled ORDER BY id',
      [tenantId],
    );
    return rows.map((row) => row.role_mapping);
  },
};

export const identityRepository = {
  async find(q: Queryable, tenantId: string, issuer: string, subject: string) {
    const [row] = await q.query<IdentityRow>('SELECT * FROM sso_identities WHERE tenant_id = $1 AND issuer = $2 AND subject = $3', [
      tenantId,
      issuer,
      subject,
    ]);
    return row;
  },

  /** Whether the user holds an identity from `issuer` already (then no other one of it is ever linked). */
  async userHasIssuer(q: Queryable, userId: string, issuer: string) {
    const rows = await q.query('SELECT 1 FROM sso_identities WHERE user_id = $1 AND issuer = $2', [userId, issuer]);
    return rows.length > 0;
  },

  /** Links; false when the identity or the (user, issuer) pair exists already (a race lost). */
  async insert(q: Queryable, row: IdentityRow) {
    const rows = await q.query(
      `INSERT INTO sso_identities (tenant_id, issuer, subject, user_id, connection_id, email)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING user_id`,
      [row.tenant_id, row.issuer, row.subject, row.user_id, row.connection_id, row.email],
    );
    return rows.length > 0;
  },

  async touch(q: Queryable, row: Pick<IdentityRow, 'tenant_id' | 'issuer' | 'subject' | 'email' | 'connection_id'>) {
    await q.query(
      `UPDATE sso_identities SET email = $4, connection_id = $5, last_sign_in_at = now()
        WHERE tenant_id = $1 AND issuer = $2 AND subject = $3`,
      [row.tenant_id, row.issuer, row.subject, row.email, row.connection_id],
    );
  },
};

export const transactionRepository = {
  async insert(q: Queryable, row: Omit<TransactionRow, 'consumed_at'>) {
    // Housekeeping first: spent and expired transactions can never be used again.
    await q.query(`DELETE FROM sso_transactions WHERE expires_at < now() - interval '1 hour'`);
    await q.query(
      `INSERT INTO sso_transactions (id, connection_id, state_hash, nonce, code_verifier, return_to, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [row.id, row.connection_id, row.state_hash, row.nonce, row.code_verifier, row.return_to, row.expires_at],
    );
  },

  /** Spends a live transaction and returns it; nothing when it is unknown, spent already or expired. */
  async consume(q: Queryable, id: string) {
    const [row] = await q.query<TransactionRow>(
      `UPDATE sso_transactions SET consumed_at = now()
        WHERE id = $1 AND consumed_at IS NULL AND expires_at > now() RETURNING *`,
      [id],
    );
    return row;
  },
};

export const ssoSessionRepository = {
  async insert(q: Queryable, row: SsoSessionRow) {
    await q.query(`DELETE FROM sso_sessions WHERE user_id = $1 AND expires_at < now()`, [row.user_id]);
    await q.query(
      `INSERT INTO sso_sessions (id, tenant_id, user_id, connection_id, family_id, challenge_id, subject, sid, id_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        row.id,
        row.tenant_id,
        row.user_id,
        row.connection_id,
        row.family_id,
        row.challenge_id,
        row.subject,
        row.sid,
        row.id_token,
        row.expires_at,
      ],
    );
  },

  /** A sign-in that waited for its TOTP code has its session now. */
  async bindChallenge(q: Queryable, challengeId: string, familyId: string) {
    await q.query('UPDATE sso_sessions SET family_id = $2, challenge_id = NULL WHERE challenge_id = $1 AND family_id IS NULL', [
      challengeId,
      familyId,
    ]);
  },

  async byFamily(q: Queryable, familyId: string) {
    const [row] = await q.query<SsoSessionRow>('SELECT * FROM sso_sessions WHERE family_id = $1', [familyId]);
    return row;
  },

  /** The sessions a back-channel logout names: by the IdP's session id, or (without one) every session of the subject. */
  async families(q: Queryable, connectionId: string, by: { sid?: string; subject?: string }) {
    const rows = await q.query<{ family_id: string; user_id: string }>(
      `SELECT family_id, user_id FROM sso_sessions
        WHERE connection_id = $1 AND family_id IS NOT NULL
          AND ($2::text IS NULL OR sid = $2) AND ($3::text IS NULL OR subject = $3)`,
      [connectionId, by.sid ?? null, by.subject ?? null],
    );
    return rows;
  },

  async deleteByFamilies(q: Queryable, familyIds: string[]) {
    await q.query('DELETE FROM sso_sessions WHERE family_id = ANY($1::text[])', [familyIds]);
  },
};

export const logoutTokenRepository = {
  /** Remembers a logout token's jti until it expires; false when it was acted on before. */
  async remember(q: Queryable, id: string, expiresAt: Date) {
    await q.query('DELETE FROM sso_logout_tokens WHERE expires_at < now()');
    const rows = await q.query('INSERT INTO sso_logout_tokens (id, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id', [
      id,
      expiresAt,
    ]);
    return rows.length > 0;
  },
};

/** The users rows an SSO sign-in reads and writes: in the connection's tenant only. */
export const ssoUserRepository = {
  /** A SCIM-provisioned user of the tenant by its externalId (users.external_id, migration 0018). */
  async provisionedByExternalId(q: Queryable, tenantId: string, externalId: string) {
    const [row] = await q.query<UserRow>("SELECT * FROM users WHERE tenant_id = $1 AND external_id = $2 AND provisioned_by = 'scim'", [
      tenantId,
      externalId,
    ]);
    return row;
  },

  /** The tenant's account with this address (addresses are unique across tenants, so at most one). */
  async byEmailInTenant(q: Queryable, tenantId: string, email: string) {
    const [row] = await q.query<UserRow>('SELECT * FROM users WHERE tenant_id = $1 AND lower(email) = lower($2)', [tenantId, email]);
    return row;
  },

  /** Whether any account, in any tenant, has this address (a JIT user then gets none, so no other tenant's account shows). */
  async emailInUse(q: Queryable, email: string) {
    const rows = await q.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
    return rows.length > 0;
  },

  /** Creates a JIT user; nothing when the username or the address was taken meanwhile. */
  async insert(q: Queryable, row: Pick<UserRow, 'id' | 'tenant_id' | 'username' | 'email' | 'email_verified' | 'password_hash' | 'roles'>) {
    const [created] = await q.query<UserRow>(
      `INSERT INTO users (id, tenant_id, username, email, email_verified, password_hash, roles)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING *`,
      [row.id, row.tenant_id, row.username, row.email, row.email_verified, row.password_hash, row.roles],
    );
    return created;
  },

  async setRoles(q: Queryable, tenantId: string, userId: string, roles: RoleName[]) {
    const [row] = await q.query<UserRow>('UPDATE users SET roles = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING *', [
      tenantId,
      userId,
      roles,
    ]);
    return row;
  },
};
