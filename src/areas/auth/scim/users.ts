// SCIM Users (RFC 7643 §4.1) of the token's tenant, mapped onto the platform's users:
//   userName    → users.username, as sent (usually a UPN, e-mail-shaped): the person signs
//                 in with it (a login with an @ finds an e-mail address or such a username)
//   emails      → kept as sent; the primary one (else the first) is users.email
//   externalId  → users.external_id (case-exact, unique in the tenant): SSO finds the user by it
//   displayName → users.display_name; active → users.status (active / disabled)
//   password    → users.password_hash (write-only); without one the account has no password
//   name, nickName, title, phoneNumbers, addresses, the enterprise extension… → kept as sent
//   roles       → read-only (users.roles): 400 mutability on any change; groups → read-only
// SCIM sees only the users it provisioned: a local account is not listed, its id is 404,
// and a POST for its userName is 409 uniqueness (no silent adoption).
import type { Database } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { Principal } from '../../../platform/identity.js';
import { isId, newId } from '../../../platform/ids.js';
import { hashPassword } from '../../../platform/passwords.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../users/schemas.js';
import type { UserRow } from '../users/repository.js';
import { invalidValue, mutability, resourceNotFound, uniqueness } from './errors.js';
import { applyPatch, asBoolean, canonical, field, patchOperations, type ResourceShape, type ScimDocument } from './patch.js';
import { parseFilter } from './filter.js';
import { SCHEMA, SCIM_LIMITS } from './protocol.js';
import { scimRepository, type ScimUserChanges, type UserFilter } from './repository.js';
import { lineOf, listResponse, pagingOf, requireSchema, scimTenant } from './resource.js';
import { announce, endAllAccess } from './access.js';
import { refreshTokenRepository } from '../sessions/repository.js';

/**
 * The tenant's SSO role mapping (sso/connections.ts roleForGroups, handed in by the gateway):
 * the role a user holds by the display names of their SCIM groups, or null to leave their roles alone.
 * Called whenever a user's group membership (or a group's name) changes. SCIM itself
 * never grants a role: only this mapping, which a tenant admin sets, can; and it can
 * name `admin` or `member`, never `platform_admin`.
 */
export type RoleForGroups = (tenantId: string, groupDisplayNames: string[]) => Promise<'admin' | 'member' | null>;

export interface ScimDeps {
  db: Database;
  bus: InvalidationBus;
  /** GATEWAY_PUBLIC_URL, for meta.location behind a proxy. */
  config: { sso: { publicUrl: string | undefined } };
  roleForGroups: RoleForGroups;
}

/** Where resources live, for meta.location and members' $ref: `https://host/api/auth/scim/v2`. */
export type BaseUrl = string;

const PROFILE_STRINGS = ['nickName', 'profileUrl', 'title', 'userType', 'preferredLanguage', 'locale', 'timezone'] as const;
const PROFILE_LISTS = ['phoneNumbers', 'ims', 'photos', 'addresses'] as const;
const NAME_PARTS = ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'] as const;

export const USER_SHAPE: ResourceShape = {
  core: SCHEMA.user,
  extensions: [SCHEMA.enterpriseUser],
  writable: ['userName', 'externalId', 'name', 'displayName', 'active', 'password', 'emails', ...PROFILE_STRINGS, ...PROFILE_LISTS],
  readOnly: ['id', 'meta', 'schemas', 'groups', 'roles', 'entitlements', 'x509Certificates'],
  multiValued: ['emails', ...PROFILE_LISTS, 'groups', 'roles', 'entitlements', 'x509Certificates'],
  names: [
    'userName',
    'externalId',
    'name',
    'displayName',
    'active',
    'password',
    'emails',
    ...PROFILE_STRINGS,
    ...PROFILE_LISTS,
    'id',
    'meta',
    'schemas',
    'groups',
    'roles',
    'entitlements',
    'x509Certificates',
    ...NAME_PARTS,
    'value',
    'display',
    'type',
    'primary',
    '$ref',
    'streetAddress',
    'locality',
    'region',
    'postalCode',
    'country',
    'employeeNumber',
    'costCenter',
    'organization',
    'division',
    'department',
    'manager',
  ],
};

export const USER_FILTERS = ['userName', 'externalId', 'emails.value', 'displayName'] as const;
const NO_PASSWORD = '!scim-no-password';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface UserFields extends ScimUserChanges {
  active: boolean | undefined;
  password: string | undefined;
}

/** The stored user as the SCIM document a PATCH applies to (no meta, groups or roles: those are read-only). */
function documentOf(row: UserRow): ScimDocument {
  const profile = row.scim_profile ?? {};
  const { enterprise, emails, ...core } = profile as Record<string, unknown>;
  return {
    schemas: [SCHEMA.user],
    userName: row.username,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    ...(row.display_name !== null ? { displayName: row.display_name } : {}),
    ...core,
    ...(Array.isArray(emails) ? { emails } : row.email ? { emails: [{ value: row.email, primary: true }] } : {}),
    active: row.status === 'active',
    ...(enterprise ? { [SCHEMA.enterpriseUser]: enterprise } : {}),
  };
}

export function userResource(row: UserRow, groups: { id: string; display_name: string }[], base: BaseUrl) {
  const doc = documentOf(row);
  const enterprise = doc[SCHEMA.enterpriseUser];
  const { schemas: _schemas, ...attributes } = doc;
  return {
    schemas: enterprise ? [SCHEMA.user, SCHEMA.enterpriseUser] : [SCHEMA.user],
    id: row.id,
    ...attributes,
    groups: groups.map((g) => ({ value: g.id, display: g.display_name, $ref: `${base}/Groups/${g.id}` })),
    // What the platform grants the user; SCIM reads it and cannot change it.
    roles: row.roles.map((role) => ({ value: role })),
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${base}/Users/${row.id}`,
    },
  };
}

/** A document's attributes as the user's fields, each checked (400 invalidValue naming it). */
function fieldsOf(doc: ScimDocument): UserFields {
  const username = lineOf(field(doc, 'userName'), 'userName');
  if (!username || username.trim() === '') throw invalidValue('userName is required: a non-blank string.');
  const externalId = lineOf(field(doc, 'externalId'), 'externalId');
  const rawActive = field(doc, 'active');
  const active = rawActive === undefined || rawActive === null ? undefined : asBoolean(rawActive);
  if (active === undefined && rawActive !== undefined && rawActive !== null) throw invalidValue('active must be true or false.');
  const rawPassword = field(doc, 'password');
  if (rawPassword !== undefined && rawPassword !== null) {
    if (typeof rawPassword !== 'string' || rawPassword.length < PASSWORD_MIN_LENGTH || rawPassword.length > PASSWORD_MAX_LENGTH)
      throw invalidValue(`password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`);
  }
  const profile: Record<string, unknown> = {};
  for (const name of PROFILE_STRINGS) {
    const value = lineOf(field(doc, name), name, 2048);
    if (value !== null) profile[name] = value;
  }
  const name = field(doc, 'name');
  if (name !== undefined && name !== null) {
    if (typeof name !== 'object' || Array.isArray(name)) throw invalidValue('name must be an object.');
    const parts: Record<string, string> = {};
    for (const part of NAME_PARTS) {
      const value = lineOf(field(name, part), `name.${part}`, 1024);
      if (value !== null) parts[part] = value;
    }
    if (Object.keys(parts).length) profile.name = parts;
  }
  for (const list of PROFILE_LISTS) {
    const value = field(doc, list);
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'object' || item === null || Array.isArray(item)))
      throw invalidValue(`${list} must be an array of objects.`);
    if (value.length) profile[list] = value;
  }
  const emails = emailsOf(field(doc, 'emails'));
  if (emails.length) profile.emails = emails;
  const enterprise = field(doc, SCHEMA.enterpriseUser);
  if (enterprise !== undefined && enterprise !== null) {
    if (typeof enterprise !== 'object' || Array.isArray(enterprise)) throw invalidValue(`${SCHEMA.enterpriseUser} must be an object.`);
    if (Object.keys(enterprise).length) profile.enterprise = enterprise;
  }
  if (Buffer.byteLength(JSON.stringify(profile)) > SCIM_LIMITS.maxProfileBytes)
    throw invalidValue(`The user's other attributes (name, emails, phoneNumbers…) exceed ${SCIM_LIMITS.maxProfileBytes} bytes.`);
  const primary = emails.find((e) => e.primary === true) ?? emails[0];
  return {
    username,
    email: primary?.value ?? null,
    external_id: externalId,
    display_name: lineOf(field(doc, 'displayName'), 'displayName'),
    scim_profile: profile,
    active,
    password: typeof rawPassword === 'string' ? rawPassword : undefined,
  };
}

function emailsOf(value: unknown): { value: string; type?: string; primary?: boolean; display?: string }[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidValue('emails must be an array.');
  if (value.length > 20) throw invalidValue('A user has at most 20 emails.');
  return value.map((item, i) => {
    const address = lineOf(field(item, 'value'), `emails[${i}].value`, 254);
    if (!address || !EMAIL.test(address)) throw invalidValue(`emails[${i}].value must be an e-mail address.`);
    const type = lineOf(field(item, 'type'), `emails[${i}].type`, 64);
    const display = lineOf(field(item, 'display'), `emails[${i}].display`, 254);
    const rawPrimary = field(item, 'primary');
    const primary = rawPrimary === undefined || rawPrimary === null ? undefined : asBoolean(rawPrimary);
    if (primary === undefined && rawPrimary !== undefined && rawPrimary !== null)
      throw invalidValue(`emails[${i}].primary must be true or false.`);
    return { value: address, ...(type ? { type } : {}), ...(primary !== undefined ? { primary } : {}), ...(display ? { display } : {}) };
  });
}

/** `roles` in a POST or PUT: read-only, so accepted only as what the user holds already (a client echoing it back). */
function requireRolesUnchanged(doc: ScimDocument, current: string[]): void {
  const entitlements = field(doc, 'entitlements');
  if (entitlements !== undefined && entitlements !== null && !(Array.isArray(entitlements) && entitlements.length === 0))
    throw mutability('entitlements cannot be set through SCIM.');
  const roles = field(doc, 'roles');
  if (roles === undefined || roles === null) return;
  const sent = (Array.isArray(roles) ? roles : [roles]).map((r) => (typeof r === 'object' && r !== null ? field(r, 'value') : r));
  const same = sent.length === current.length && sent.every((r) => typeof r === 'string' && current.includes(r));
  if (!same) throw mutability('roles cannot be changed through SCIM: a role comes from the tenant’s SSO role mapping of groups.');
}

const taken = () => uniqueness('The userName, an e-mail address or the externalId is already in use.');

/**
 * 409 uniqueness when the user's userName or primary e-mail address is any other
 * account's username or address (of this tenant or another: one answer for both, so it
 * says nothing of other tenants), or the externalId another user's of this tenant.
 */
async function requireUnique(deps: Pick<ScimDeps, 'db'>, tenantId: string, fields: UserFields, selfId: string | null): Promise<void> {
  if (await scimRepository.loginTaken(deps.db, fields.username, selfId)) throw taken();
  if (
    fields.email &&
    fields.email.toLowerCase() !== fields.username.toLowerCase() &&
    (await scimRepository.loginTaken(deps.db, fields.email, selfId))
  )
    throw taken();
  if (fields.external_id !== null && (await scimRepository.externalIdTaken(deps.db, tenantId, fields.external_id, selfId))) throw taken();
}

function conflictOnUniqueViolation(error: unknown): never {
  if (isUniqueViolation(error)) throw taken();
  throw error;
}

async function groupsOf(deps: Pick<ScimDeps, 'db'>, tenantId: string, userIds: string[]) {
  const rows = userIds.length ? await scimRepository.groupsOfUsers(deps.db, tenantId, userIds) : [];
  const byUser = new Map<string, { id: string; display_name: string }[]>();
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row]);
  return byUser;
}

async function existingUser(deps: Pick<ScimDeps, 'db'>, tenantId: string, id: string): Promise<UserRow> {
  const row = isId('user', id) ? await scimRepository.getUser(deps.db, tenantId, id) : undefined;
  if (!row) throw resourceNotFound('User', id);
  return row;
}

export async function createUser(deps: ScimDeps, principal: Principal, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  const doc = canonical(requireSchema(body, SCHEMA.user), USER_SHAPE) as ScimDocument;
  requireRolesUnchanged(doc, ['member']);
  const fields = fieldsOf(doc);
  await requireUnique(deps, tenantId, fields, null);
  const passwordHash = fields.password !== undefined ? await hashPassword(fields.password) : NO_PASSWORD;
  try {
    const row = await scimRepository.insertUser(deps.db, {
      ...fields,
      id: newId('user'),
      tenant_id: tenantId,
      password_hash: passwordHash,
      status: fields.active === false ? 'disabled' : 'active',
    });
    return userResource(row, [], base);
  } catch (error) {
    conflictOnUniqueViolation(error);
  }
}

export async function getUser(deps: ScimDeps, principal: Principal, id: string, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  const row = await existingUser(deps, tenantId, id);
  return userResource(row, (await groupsOf(deps, tenantId, [row.id])).get(row.id) ?? [], base);
}

export async function listUsers(
  deps: ScimDeps,
  principal: Principal,
  query: { filter?: string; startIndex?: string; count?: string },
  base: BaseUrl,
) {
  const tenantId = scimTenant(principal);
  const filters: UserFilter[] = query.filter === undefined ? [] : parseFilter(query.filter, USER_FILTERS, SCHEMA.user);
  const paging = pagingOf(query);
  const { total, rows } = await scimRepository.listUsers(deps.db, tenantId, filters, paging.startIndex - 1, paging.count);
  const groups = await groupsOf(
    deps,
    tenantId,
    rows.map((r) => r.id),
  );
  return listResponse(
    rows.map((row) => userResource(row, groups.get(row.id) ?? [], base)),
    total,
    paging,
  );
}

/** PUT: the body replaces the user (an attribute left out is cleared; password and, when absent, active are kept). */
export async function replaceUser(deps: ScimDeps, principal: Principal, id: string, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  const row = await existingUser(deps, tenantId, id);
  const doc = canonical(requireSchema(body, SCHEMA.user), USER_SHAPE) as ScimDocument;
  requireRolesUnchanged(doc, row.roles);
  return saveUser(deps, tenantId, row, fieldsOf(doc), base);
}

/** PATCH: the operations applied to the stored user, then saved with a PUT's checks. */
export async function patchUser(deps: ScimDeps, principal: Principal, id: string, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  // The id first: another tenant's is 404 whatever the body, as an unknown one is.
  const row = await existingUser(deps, tenantId, id);
  const operations = patchOperations(requireSchema(body, SCHEMA.patchOp));
  const patched = applyPatch(documentOf(row), operations, USER_SHAPE, row.id);
  return saveUser(deps, tenantId, row, fieldsOf(patched), base);
}

async function saveUser(deps: ScimDeps, tenantId: string, row: UserRow, fields: UserFields, base: BaseUrl) {
  await requireUnique(deps, tenantId, fields, row.id);
  const status = fields.active === undefined ? row.status : fields.active ? 'active' : 'disabled';
  const deactivated = row.status === 'active' && status === 'disabled';
  const passwordHash = fields.password !== undefined ? await hashPassword(fields.password) : undefined;
  let saved: UserRow | undefined;
  try {
    saved = await deps.db.tx(async (q) => {
      const updated = await scimRepository.updateUser(q, tenantId, row.id, {
        username: fields.username,
        email: fields.email,
        external_id: fields.external_id,
        display_name: fields.display_name,
        scim_profile: fields.scim_profile,
        status,
        ...(passwordHash ? { password_hash: passwordHash } : {}),
      });
      if (updated && deactivated) await endAllAccess(q, tenantId, row.id);
      // As for a password an admin sets: the sessions signed in under the old one end.
      else if (updated && passwordHash) await refreshTokenRepository.revokeAllForUser(q, row.id);
      return updated;
    });
  } catch (error) {
    conflictOnUniqueViolation(error);
  }
  if (!saved) throw resourceNotFound('User', row.id);
  // A status change (or a new password) reaches every replica's cached account state at once.
  if (status !== row.status || passwordHash) await announce(deps.bus, row.id);
  return userResource(saved, (await groupsOf(deps, tenantId, [row.id])).get(row.id) ?? [], base);
}

/** DELETE: every credential ends first, then the account is gone (its sessions and memberships with it). */
export async function deleteUser(deps: ScimDeps, principal: Principal, id: string): Promise<void> {
  const tenantId = scimTenant(principal);
  const row = await existingUser(deps, tenantId, id);
  const deleted = await deps.db.tx(async (q) => {
    await endAllAccess(q, tenantId, row.id);
    return scimRepository.deleteUser(q, tenantId, row.id);
  });
  if (!deleted) throw resourceNotFound('User', id);
  await announce(deps.bus, row.id);
}
