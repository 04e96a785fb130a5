// What a principal may do, as pure checks every area applies the same way: each
// returns the principal or throws the problem the caller gets (403, or 404 where
// even the answer "forbidden" would say too much). They sit beside identity.ts,
// not in an area, because several areas need them and no area may import another.
import { AppError, forbidden, notFound } from './errors.js';
import { isPlatformAdmin, isTenantAdmin, type Principal } from './identity.js';

/** A signed-in person (not an API key). */
export function requireUser(principal: Principal): Principal {
  if (principal.kind !== 'user') throw forbidden('This action needs a signed-in user; API keys cannot perform it.');
  return principal;
}

/**
 * An administrator acting on `tenantId`: that tenant's admin, or a platform admin.
 * Another tenant's admin gets 404, exactly as if the tenant did not exist.
 */
export function requireTenantAdmin(principal: Principal, tenantId: string): Principal {
  if (principal.kind !== 'user') throw forbidden('Administration needs an administrator access token; API keys cannot perform it.');
  if (isPlatformAdmin(principal)) return principal;
  if (principal.tenantId !== tenantId) throw notFound('Tenant');
  if (!isTenantAdmin(principal)) throw forbidden('This action needs the tenant admin role.');
  return principal;
}

export function requirePlatformAdmin(principal: Principal): Principal {
  if (!isPlatformAdmin(principal)) throw new AppError('FORBIDDEN', 'This action needs the platform admin role.');
  return principal;
}

/**
 * Changing a tenant's content (workspaces, collections, documents): a tenant admin,
 * or an integration's API key. Members read only. `what` names the content in the 403.
 */
export function requireTenantEditor(principal: Principal, what: string): Principal {
  if (principal.kind === 'apiKey' || isTenantAdmin(principal)) return principal;
  throw forbidden(`Changing ${what} needs the tenant admin role or an API key.`);
}
