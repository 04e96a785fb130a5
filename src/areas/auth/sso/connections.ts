// A tenant's SSO connections: a tenant admin of the tenant (or a platform admin) lists,
// creates, reads, changes and deletes them; members and API keys get 403, another
// tenant's admin 404 (administeredTenant). The client secret is write-only, stored
// encrypted. The issuer is checked at save (https, not multi-tenant, the deny list of
// whoever gave it) and again at every fetch (providers.ts).
import type { Database, Queryable } from '../../../platform/db/database.js';
import { notFound, validation } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import { isPlatformAdmin, type Principal } from '../../../platform/identity.js';
import { administeredTenant } from '../tenants/service.js';
import type { SsoDeps } from './deps.js';
import { checkIssuer, SHARED_ISSUERS, type UrlScope } from './providers.js';
import { connectionRepository, type ConnectionFields, type ConnectionRow } from './repository.js';
import type { MappedRole, NewSsoConnection, SsoConnection, SsoConnectionPatch } from './schemas.js';

type Deps = Pick<SsoDeps, 'db' | 'secrets' | 'auth'>;

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

/** The URLs the IdP is told about, on the origin browsers reach the gateway at. */
export function connectionUrls(origin: string, connectionId: string) {
  return {
    redirectUri: `${origin}/api/auth/sso/callback/${connectionId}`,
    postLogoutRedirectUri: `${origin}/`,
    backchannelLogoutUri: `${origin}/api/auth/sso/backchannel-logout/${connectionId}`,
    startUrl: `${origin}/api/auth/sso/${connectionId}/start`,
  };
}

export const toConnection = (row: ConnectionRow, origin: string): SsoConnection => {
  const { redirectUri, postLogoutRedirectUri, backchannelLogoutUri } = connectionUrls(origin, row.id);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.client_id,
    tokenEndpointAuthMethod: row.token_auth_method,
    scopes: row.scopes,
    allowedEmailDomains: row.allowed_email_domains,
    groupsClaim: row.groups_claim,
    roleMapping: row.role_mapping,
    subjectClaim: row.subject_claim,
    jit: row.jit,
    ssoOnly: row.sso_only,
    trustIdpMfa: row.trust_idp_mfa,
    enabled: row.enabled,
    redirectUri,
    postLogoutRedirectUri,
    backchannelLogoutUri,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
};

const scopeOf = (principal: Principal): UrlScope => (isPlatformAdmin(principal) ? 'platform' : 'tenant');

async function connectionInTenant(q: Queryable, tenantId: string, connectionId: string): Promise<ConnectionRow> {
  const row = isId('ssoConnection', connectionId) ? await connectionRepository.getInTenant(q, tenantId, connectionId) : undefined;
  if (!row) throw notFound('SSO connection');
  return row;
}

function checkScopes(scopes: string[]): string[] {
  if (!scopes.includes('openid')) throw validation('scopes', 'must include openid');
  return scopes;
}

const lowerCased = (domains: string[]) => [...new Set(domains.map((d) => d.toLowerCase()))];

/** A shared issuer (Google) admits every account it has: only with the tenant's domains named. */
function checkSharedIssuer(issuer: string, domains: string[]): void {
  if (SHARED_ISSUERS.has(issuer.replace(/\/$/, '')) && domains.length === 0)
    throw validation('allowedEmailDomains', `must name your domains: ${issuer} is shared by every customer of the provider`);
}

export async function listConnections(deps: Deps, principal: Principal, tenantId: string, origin: string): Promise<SsoConnection[]> {
  await administeredTenant(deps, principal, tenantId);
  return (await connectionRepository.listInTenant(deps.db, tenantId)).map((row) => toConnection(row, origin));
}

export async function getConnection(
  deps: Deps,
  principal: Principal,
  tenantId: string,
  connectionId: string,
  origin: string,
): Promise<SsoConnection> {
  await administeredTenant(deps, principal, tenantId);
  return toConnection(await connectionInTenant(deps.db, tenantId, connectionId), origin);
}

export async function createConnection(
  deps: Deps,
  principal: Principal,
  tenantId: string,
  input: NewSsoConnection,
  origin: string,
): Promise<SsoConnection> {
  await administeredTenant(deps, principal, tenantId);
  const scope = scopeOf(principal);
  const domains = lowerCased(input.allowedEmailDomains ?? []);
  checkSharedIssuer(input.issuer.trim(), domains);
  const issuer = await checkIssuer(deps.auth.sso.outbound, input.issuer, scope);
  const fields: ConnectionFields = {
    name: input.name.trim(),
    issuer,
    url_scope: scope,
    client_id: input.clientId,
    client_secret: deps.secrets.encrypt(input.clientSecret),
    token_auth_method: input.tokenEndpointAuthMethod ?? 'client_secret_basic',
    scopes: checkScopes(input.scopes ?? DEFAULT_SCOPES),
    allowed_email_domains: domains,
    groups_claim: input.groupsClaim ?? 'groups',
    role_mapping: input.roleMapping ?? {},
    subject_claim: input.subjectClaim ?? 'sub',
    jit: input.jit ?? false,
    sso_only: input.ssoOnly ?? false,
    trust_idp_mfa: input.trustIdpMfa ?? false,
    enabled: input.enabled ?? true,
  };
  const row = await connectionRepository.insert(deps.db, {
    id: newId('ssoConnection'),
    tenant_id: tenantId,
    created_by: principal.subject,
    ...fields,
  });
  return toConnection(row, origin);
}

export async function updateConnection(
  deps: Deps,
  principal: Principal,
  tenantId: string,
  connectionId: string,
  patch: SsoConnectionPatch,
  origin: string,
): Promise<SsoConnection> {
  await administeredTenant(deps, principal, tenantId);
  const current = await connectionInTenant(deps.db, tenantId, connectionId);
  const changes: Partial<ConnectionFields> = {};
  if (patch.issuer !== undefined) {
    // A new issuer is held to the deny list of whoever gives it, from now on.
    changes.url_scope = scopeOf(principal);
    changes.issuer = await checkIssuer(deps.auth.sso.outbound, patch.issuer, changes.url_scope);
  }
  if (patch.allowedEmailDomains !== undefined) changes.allowed_email_domains = lowerCased(patch.allowedEmailDomains);
  checkSharedIssuer(changes.issuer ?? current.issuer, changes.allowed_email_domains ?? current.allowed_email_domains);
  if (patch.name !== undefined) changes.name = patch.name.trim();
  if (patch.clientId !== undefined) changes.client_id = patch.clientId;
  if (patch.clientSecret !== undefined) changes.client_secret = deps.secrets.encrypt(patch.clientSecret);
  if (patch.tokenEndpointAuthMethod !== undefined) changes.token_auth_method = patch.tokenEndpointAuthMethod;
  if (patch.scopes !== undefined) changes.scopes = checkScopes(patch.scopes);
  if (patch.groupsClaim !== undefined) changes.groups_claim = patch.groupsClaim;
  if (patch.roleMapping !== undefined) changes.role_mapping = patch.roleMapping;
  if (patch.subjectClaim !== undefined) changes.subject_claim = patch.subjectClaim;
  if (patch.jit !== undefined) changes.jit = patch.jit;
  if (patch.ssoOnly !== undefined) changes.sso_only = patch.ssoOnly;
  if (patch.trustIdpMfa !== undefined) changes.trust_idp_mfa = patch.trustIdpMfa;
  if (patch.enabled !== undefined) changes.enabled = patch.enabled;
  const row = await connectionRepository.update(deps.db, tenantId, connectionId, changes);
  if (!row) throw notFound('SSO connection');
  return toConnection(row, origin);
}

/** Deletes the connection; its identities stay (keyed by issuer), its open sign-ins and session records go. */
export async function deleteConnection(deps: Deps, principal: Principal, tenantId: string, connectionId: string): Promise<void> {
  await administeredTenant(deps, principal, tenantId);
  await connectionInTenant(deps.db, tenantId, connectionId);
  if (!(await connectionRepository.delete(deps.db, tenantId, connectionId))) throw notFound('SSO connection');
}

/** The role `groups` give through one mapping: admin over member; null when no group is mapped. */
export function roleFromMapping(mapping: Record<string, MappedRole>, groups: readonly string[]): MappedRole | null {
  let role: MappedRole | null = null;
  for (const group of groups) {
    const mapped = Object.hasOwn(mapping, group) ? mapping[group] : undefined;
    if (mapped === 'admin') return 'admin';
    if (mapped === 'member') role = 'member';
  }
  return role;
}

/**
 * The role a tenant's groups give, through the role mappings of all its enabled
 * connections (admin over member), for the SCIM side: groups map to roles only through
 * roleMapping, and never to platform_admin. As at an SSO sign-in, where the tenant maps
 * groups at all, groups none of which is mapped give member (leaving the admins' group
 * demotes); null only where no enabled connection maps any group: roles are left alone.
 */
export async function roleForGroups(db: Queryable | Database, tenantId: string, groups: string[]): Promise<MappedRole | null> {
  const mappings = (await connectionRepository.roleMappings(db, tenantId)).filter((mapping) => Object.keys(mapping).length > 0);
  if (mappings.length === 0) return null;
  let role: MappedRole = 'member';
  for (const mapping of mappings) if (roleFromMapping(mapping, groups) === 'admin') role = 'admin';
  return role;
}
