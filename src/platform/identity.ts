// Who is calling, as the services see it: resolved at the edge from an API key or
// an access token, carried to the services inside the internal token.

export type Role = 'member' | 'admin' | 'platform_admin';
export const ROLES: readonly Role[] = ['member', 'admin', 'platform_admin'];

export interface Principal {
  tenantId: string;
  kind: 'user' | 'apiKey';
  /** usr_… for people, key_… for API keys. */
  subject: string;
  roles: Role[];
  scopes: string[];
  customerId?: string;
}

export const isPlatformAdmin = (p: Principal) => p.kind === 'user' && p.roles.includes('platform_admin');
export const isTenantAdmin = (p: Principal) => p.kind === 'user' && (p.roles.includes('admin') || p.roles.includes('platform_admin'));
