import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import { AppError, notFound, validation } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { ROLES, type Role } from '../../../platform/identity.js';
import { hashPassword } from '../../../platform/passwords.js';
import { tenantRepository } from '../tenants/repository.js';
import { userRepository, type UserRow } from './repository.js';

/** The user object of the spec's login response (2.4) and of /api/auth/me. */
export interface User {
  id: string;
  username: string;
  email: string | null;
  tenantId: string;
  roles: Role[];
  twoFactorEnabled: boolean;
  status: UserRow['status'];
  createdAt: string;
}

export const toUser = (row: UserRow): User => ({
  id: row.id,
  username: row.username,
  email: row.email,
  tenantId: row.tenant_id,
  roles: row.roles,
  twoFactorEnabled: row.totp_enabled,
  status: row.status,
  createdAt: row.created_at.toISOString(),
});

// Usernames never contain '@', so the login field is unambiguous.
export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$';
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NewUser {
  tenantId: string;
  username: string;
  password: string;
  email?: string;
  roles: Role[];
}

export function checkNewUser(input: NewUser): void {
  if (!new RegExp(USERNAME_PATTERN).test(input.username)) {
    throw validation('username', 'must be 2-64 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  }
  if (input.password.length < PASSWORD_MIN_LENGTH || input.password.length > PASSWORD_MAX_LENGTH) {
    throw validation('password', `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  if (input.email !== undefined && !EMAIL.test(input.email)) throw validation('email', 'must be an e-mail address');
  for (const role of input.roles) if (!ROLES.includes(role)) throw validation('roles', `unknown role "${role}"`);
}

export async function createUser(q: Queryable, input: NewUser): Promise<User> {
  checkNewUser(input);
  if (!(await tenantRepository.get(q, input.tenantId))) throw notFound('Tenant');
  const passwordHash = await hashPassword(input.password);
  try {
    const row = await userRepository.insert(q, {
      id: newId('user'),
      tenant_id: input.tenantId,
      username: input.username,
      email: input.email ?? null,
      password_hash: passwordHash,
      roles: input.roles.length ? [...new Set(input.roles)] : ['member'],
    });
    return toUser(row);
  } catch (error) {
    if (isUniqueViolation(error, 'users_username_key')) throw new AppError('CONFLICT', 'That username is taken.');
    if (isUniqueViolation(error, 'users_email_key')) throw new AppError('CONFLICT', 'That e-mail address is already in use.');
    throw error;
  }
}
