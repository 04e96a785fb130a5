// The world most tests act in, built once per gateway: a platform admin (in a tenant
// of their own), tenant A with an admin, a member, an API key and a SCIM token, and
// tenant B with an admin, an API key and a SCIM token. Every person comes with a ready
// access token, every key and token with its plaintext. Created through the same
// services the CLI uses, no HTTP involved.
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { issueScimToken } from '../../src/areas/auth/scim-tokens/service.js';
import { seedTenant, seedUser, tokenFor, type Seedable } from './gateway.js';

export interface WorldUser {
  id: string;
  username: string;
  password: string;
  /** An access token of the user, ready to send as `{ token }`. */
  token: string;
}

export interface WorldKey {
  id: string;
  /** The plaintext, ready to send as `{ apiKey }`. */
  key: string;
}

export interface World {
  /** A platform admin (roles admin and platform_admin), alone in a tenant of their own. */
  platform: { tenantId: string; admin: WorldUser };
  a: { tenantId: string; admin: WorldUser; member: WorldUser; key: WorldKey; scimToken: string };
  b: { tenantId: string; admin: WorldUser; key: WorldKey; scimToken: string };
}

/** Seeds the world; `label` goes into the tenants' and users' names. No workspace, node or other record is created. */
export async function seedWorld(gw: Seedable, label = 'world'): Promise<World> {
  const platform = await seedTenant(gw, `${label}-platform`, ['admin', 'platform_admin']);
  const a = await seedTenant(gw, `${label}-a`);
  const b = await seedTenant(gw, `${label}-b`);
  const withToken = async (user: { id: string; username: string; password: string }, tenantId: string): Promise<WorldUser> => ({
    ...user,
    token: await tokenFor(gw, user.id, tenantId),
  });
  const keyOf = async (tenantId: string, createdBy: string): Promise<WorldKey> => {
    const { id, key } = await issueApiKey(gw.ctx, tenantId, { name: `${label} key` }, createdBy);
    return { id, key };
  };
  const scimTokenOf = async (tenantId: string, createdBy: string) =>
    (await issueScimToken(gw.ctx, tenantId, { name: `${label} SCIM` }, createdBy)).token;
  return {
    platform: { tenantId: platform.tenantId, admin: await withToken(platform.admin, platform.tenantId) },
    a: {
      tenantId: a.tenantId,
      admin: await withToken(a.admin, a.tenantId),
      member: await withToken(await seedUser(gw, a.tenantId), a.tenantId),
      key: await keyOf(a.tenantId, a.admin.id),
      scimToken: await scimTokenOf(a.tenantId, a.admin.id),
    },
    b: {
      tenantId: b.tenantId,
      admin: await withToken(b.admin, b.tenantId),
      key: await keyOf(b.tenantId, b.admin.id),
      scimToken: await scimTokenOf(b.tenantId, b.admin.id),
    },
  };
}
