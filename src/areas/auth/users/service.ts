// Users: the user object, creating users (admins, the CLI, the first start), and a
// tenant administrator's management of the tenant's users.
import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { AppError, forbidden, notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, ROLES, type Principal, type RoleName } from '../../../platform/identity.js';
import { hashPassword } from '../../../platform/passwords.js';
import { administeredTenant, existingTenant } from '../tenants/service.js';
import { requireTenantAdmin, requireUser } from '../../../platform/authorization.js';
import { pagedList, type ListQuery, type PageOf } from '../../paging.js';
import { userRepository, type UserRow } from './repository.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_PATTERN, type NewUserBody, type User, type UserPatch } from './schemas.js';

export interface UserDeps {
  /** A transaction will do: the first start creates its administrator inside one. */
  db: Queryable;
  bus: InvalidationBus;
  /**
   * Ends every session of a user (the sessions feature's endSessions). Handed in by
   * the composition root: sessions reads users, so users cannot import sessions.
   */
  endSessions(userId: string): Promise<void>;
}

export const toUser = (row: UserRow): User => ({
  id: row.id,
  username: row.username,
  email: row.email,
  emailVerified: row.email_verified,
  tenantId: row.tenant_id,
  roles: row.roles,
  twoFactorEnabled: row.totp_enabled,
  status: row.status,
  createdAt: row.created_at.toISOString(),
});

/** The caller's own user row: a signed-in person (not an API key) of their tenant, or 404. */
export async function signedInUserRow(deps: Pick<UserDeps, 'db'>, principal: Principal): Promise<UserRow> {
  requireUser(principal);
  const row = await userRepository.getInTenant(deps.db, principal.tenantId, principal.subject);
  if (!row) throw notFound('User');
  return row;
}

/** For sign-in: the user a login names (a username, or an e-mail address when it holds an @), in any tenant. */
export function userByLogin(deps: Pick<UserDeps, 'db'>, login: string): Promise<UserRow | undefined> {
  return userRepository.findByLogin(deps.db, login);
}

/** For sign-in paths that start from a token (refresh, verify-2fa): the user's row, in any tenant. */
export function userById(deps: Pick<UserDeps, 'db'>, userId: string): Promise<UserRow | undefined> {
  return userRepository.get(deps.db, userId);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A user to create: the create body, in a tenant, with its roles decided (none: a member). */
export interface NewUser extends NewUserBody {
  tenantId: string;
  roles: RoleName[];
}

export function checkNewUser(input: NewUser): void {
  if (!new RegExp(USERNAME_PATTERN).test(input.username)) {
    throw validation('username', 'must be 2-64 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  }
  checkPassword(input.password);
  if (input.email !== undefined) checkEmail(input.email);
  checkRoles(input.roles);
}

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw validation('password', `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
}

function checkEmail(email: string): void {
  if (!EMAIL.test(email)) throw validation('email', 'must be an e-mail address');
}

function checkRoles(roles: RoleName[]): void {
  for (const role of roles) if (!ROLES.includes(role)) throw validation('roles', `unknown role "${role}"`);
}

function uniqueViolationAsConflict(error: unknown): never {
  if (isUniqueViolation(error, 'users_username_key')) throw new AppError('CONFLICT', 'That username is taken.');
  if (isUniqueViolation(error, 'users_email_key')) throw new AppError('CONFLICT', 'That e-mail address is already in use.');
  throw error;
}

const emailInUse = () => new AppError('CONFLICT', 'That e-mail address is already in use.');

export async function createUser(deps: Pick<UserDeps, 'db'>, input: NewUser): Promise<User> {
  checkNewUser(input);
  await existingTenant(deps, input.tenantId);
  if (input.email !== undefined && (await userRepository.emailIsAUsername(deps.db, input.email, null))) throw emailInUse();
  const passwordHash = await hashPassword(input.password);
  try {
    const row = await userRepository.insert(deps.db, {
      id: newId('user'),
      tenant_id: input.tenantId,
      username: input.username,
      email: input.email ?? null,
      email_verified: input.email !== undefined && input.emailVerified === true,
      password_hash: passwordHash,
      roles: input.roles.length ? [...new Set(input.roles)] : ['member'],
    });
    return toUser(row);
  } catch (error) {
    uniqueViolationAsConflict(error);
  }
}

// ---- Administration of a tenant's users (routes.ts) ----

const PRIVILEGED: readonly RoleName[] = ['admin', 'platform_admin'];

// Only a platform admin may hand out platform_admin, or touch an account that
// holds it: otherwise a tenant admin could reset a platform admin's password
// (or demote them) and so act above their own role.
function requireMayAssign(principal: Principal, roles: RoleName[] | undefined): void {
  if (roles?.includes('platform_admin') && !isPlatformAdmin(principal))
    throw forbidden('Only a platform admin may grant the platform_admin role.');
}

function requireMayChange(principal: Principal, target: UserRow): void {
  if (target.roles.includes('platform_admin') && !isPlatformAdmin(principal))
    throw forbidden("Only a platform admin may change a platform admin's account.");
}

async function userInTenant(q: Queryable, tenantId: string, userId: string): Promise<UserRow> {
  const row = isId('user', userId) ? await userRepository.getInTenant(q, tenantId, userId) : undefined;
  if (!row) throw notFound('User');
  return row;
}

/**
 * GET …/users: a page of the tenant's users, oldest first; `next` is the last user's id.
 * Without `limit` every matching user, as the list answered before it paged.
 */
export async function listUsers(
  deps: Pick<UserDeps, 'db'>,
  principal: Principal,
  tenantId: string,
  query: ListQuery = {},
): Promise<PageOf<User>> {
  requireTenantAdmin(principal, tenantId);
  await existingTenant(deps, tenantId);
  if (query.after !== undefined && !isId('user', query.after)) throw validation('after', "must be a user id (a page's next)");
  return pagedList(query, {
    range: { fallback: undefined, max: USERS_PAGE_MAX },
    rows: (window) => userRepository.pageInTenant(deps.db, tenantId, { ...window, after: query.after ?? null }),
    count: (pattern) => userRepository.countInTenant(deps.db, tenantId, pattern),
    toRecord: toUser,
    cursorOf: (row) => row.id,
  });
}

const USERS_PAGE_MAX = 100;

/** A tenant's users with no authorization check: for callers trusted already (listUsers, the operator's CLI). 404 for an unknown tenant. */
export async function tenantUsers(deps: Pick<UserDeps, 'db'>, tenantId: string): Promise<User[]> {
  await existingTenant(deps, tenantId);
  return (await userRepository.listInTenant(deps.db, tenantId)).map(toUser);
}

export async function getUser(deps: Pick<UserDeps, 'db'>, principal: Principal, tenantId: string, userId: string): Promise<User> {
  await administeredTenant(deps, principal, tenantId);
  return toUser(await userInTenant(deps.db, tenantId, userId));
}

/**
 * Sets a user's password with no check of who asks: for callers that checked already
 * (a signed-in user who proved the current password: sessions/account.ts).
 */
export async function replacePassword(deps: Pick<UserDeps, 'db'>, user: UserRow, password: string): Promise<void> {
  checkPassword(password);
  const row = await userRepository.update(deps.db, user.tenant_id, user.id, { password_hash: await hashPassword(password) });
  if (!row) throw notFound('User');
}

export async function createUserAs(deps: Pick<UserDeps, 'db'>, principal: Principal, tenantId: string, input: NewUserBody): Promise<User> {
  await administeredTenant(deps, principal, tenantId);
  requireMayAssign(principal, input.roles);
  return createUser(deps, {
    tenantId,
    username: input.username,
    password: input.password,
    roles: input.roles ?? [],
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.emailVerified !== undefined ? { emailVerified: input.emailVerified } : {}),
  });
}

/**
 * Changes a user. An administrator editing their own account may not disable
 * it or drop an administrative role they hold: that is how a tenant ends up
 * with nobody able to administer it. Another admin (or a platform admin) can.
 */
export async function updateUser(deps: UserDeps, principal: Principal, tenantId: string, userId: string, patch: UserPatch): Promise<User> {
  await administeredTenant(deps, principal, tenantId);
  const target = await userInTenant(deps.db, tenantId, userId);
  requireMayChange(principal, target);
  requireMayAssign(principal, patch.roles);
  if (patch.email !== undefined && patch.email !== null) checkEmail(patch.email);
  if (patch.roles) checkRoles(patch.roles);
  if (patch.password !== undefined) checkPassword(patch.password);
  if (patch.email && (await userRepository.emailIsAUsername(deps.db, patch.email, target.id))) throw emailInUse();
  if (principal.subject === target.id) {
    if (patch.status === 'disabled') throw new AppError('CONFLICT', 'You cannot disable your own account.');
    const dropped = patch.roles && PRIVILEGED.filter((role) => target.roles.includes(role) && !patch.roles!.includes(role));
    if (dropped?.length) throw new AppError('CONFLICT', `You cannot remove your own ${dropped.join(' and ')} role.`);
  }
  let row: UserRow | undefined;
  try {
    row = await userRepository.update(deps.db, tenantId, userId, {
      ...(patch.email !== undefined ? { email: patch.email } : {}),
      // A new address is unverified until an administrator says otherwise; the same one keeps its state.
      ...(patch.emailVerified !== undefined
        ? { email_verified: patch.emailVerified }
        : patch.email !== undefined && patch.email?.toLowerCase() !== target.email?.toLowerCase()
          ? { email_verified: false }
          : {}),
      ...(patch.roles ? { roles: [...new Set(patch.roles)] } : {}),
      ...(patch.status ? { status: patch.status } : {}),
      ...(patch.password !== undefined ? { password_hash: await hashPassword(patch.password) } : {}),
    });
  } catch (error) {
    uniqueViolationAsConflict(error);
  }
  if (!row) throw notFound('User');
  // A new password or a disable ends every session: refresh tokens issued under
  // the old password (perhaps to whoever stole it) stop working.
  if (patch.password !== undefined || patch.status === 'disabled') await deps.endSessions(userId);
  // Drops the cached account state, so a disable or a role change applies to the
  // user's very next request, whatever access token they still hold.
  await deps.bus.publish({ kind: 'user', id: userId });
  return toUser(row);
}
