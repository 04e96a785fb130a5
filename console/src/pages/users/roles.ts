// The console offers two roles, member and administrator; platform_admin is never
// offered, but a change of role keeps it on an account that already holds it.
import type { NewUserBody } from '../../../../src/areas/auth/users/schemas.js';

type RoleName = NonNullable<NewUserBody['roles']>[number];
export type OfferedRole = Extract<RoleName, 'member' | 'admin'>;

export const isAdmin = (roles: readonly string[]): boolean => roles.includes('admin');
export const isPlatformAdmin = (roles: readonly string[]): boolean => roles.includes('platform_admin');
export const offeredRoleOf = (roles: readonly string[]): OfferedRole => (isAdmin(roles) ? 'admin' : 'member');

/** The roles to store for the chosen one: an administrator is a member too; platform_admin stays. */
export function rolesFor(choice: OfferedRole, current: readonly string[] = []): RoleName[] {
  const kept: RoleName[] = isPlatformAdmin(current) ? ['platform_admin'] : [];
  return choice === 'admin' ? ['admin', 'member', ...kept] : ['member', ...kept];
}

export const sameRoles = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join() === [...b].sort().join();
