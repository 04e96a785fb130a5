// Who is calling, as the services see it: resolved at the edge from an API key or
// an access token, carried to the services inside the internal token.
import type { Limits } from './rate-limits/limits.js';

// The one list of roles: the type, the users' TypeBox schema and the checks are built from it.
export const ROLES = ['member', 'admin', 'platform_admin'] as const;
export type RoleName = (typeof ROLES)[number];

export interface Principal {
  tenantId: string;
  /** `scim`: a tenant's SCIM provisioning token, accepted on the SCIM routes only (areas/auth/scim/). */
  kind: 'user' | 'apiKey' | 'scim';
  /** usr_… for people, key_… for API keys, scimt_… for SCIM tokens. */
  subject: string;
  roles: RoleName[];
  scopes: string[];
  customerId?: string;
  /** An API key's rate limits and budgets, when its admin set any (src/platform/rate-limits/). */
  limits?: Limits;
  /** An API key's MCP grant (`server/*`, `server/tool`: platform/mcp-grants.ts), when its admin set one. */
  mcpAllow?: string[];
  /** People: the sign-in session (refresh-token family, fam_…) their access token was issued in, when it names one. */
  sessionId?: string;
}

export const isPlatformAdmin = (p: Principal) => p.kind === 'user' && p.roles.includes('platform_admin');
export const isTenantAdmin = (p: Principal) => p.kind === 'user' && (p.roles.includes('admin') || p.roles.includes('platform_admin'));
