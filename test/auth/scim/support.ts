// Shared by the SCIM tests: a gateway with two tenants, each with a SCIM token, and
// requests as a SCIM client sends them (application/scim+json, the bearer token).
import { seedTenant, tokenFor, type TestGateway, type TestResponse } from '../../helpers/gateway.js';
import { issueScimToken } from '../../../src/areas/auth/scim-tokens/service.js';
import { SCHEMA } from '../../../src/areas/auth/scim/protocol.js';

export { SCHEMA };
export const SCIM = '/api/auth/scim/v2';

export interface ScimTenant {
  tenantId: string;
  admin: { id: string; username: string; password: string };
  adminToken: string;
  scimToken: string;
}

export async function scimTenant(gw: TestGateway, label: string): Promise<ScimTenant> {
  const seeded = await seedTenant(gw, label);
  const { token } = await issueScimToken(gw.ctx, seeded.tenantId, { name: `${label} IdP` }, seeded.admin.id);
  return { ...seeded, adminToken: await tokenFor(gw, seeded.admin.id, seeded.tenantId), scimToken: token };
}

/** A SCIM request: the tenant's token, the body as application/scim+json. */
export function scim(gw: TestGateway, token: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) {
  return gw.request(method, `${SCIM}${path}`, {
    token,
    headers: { ...(json !== undefined ? { 'content-type': 'application/scim+json' } : {}), ...headers },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

let seq = 0;
/** A user as Okta's provisioning sends it on create. */
export function oktaUser(overrides: Record<string, unknown> = {}) {
  const n = `${Date.now().toString(36)}${++seq}`;
  return {
    schemas: [SCHEMA.user],
    userName: `person${n}@corp${n}.example`,
    name: { givenName: 'Pat', familyName: `Person${n}` },
    emails: [{ primary: true, value: `person${n}@corp${n}.example`, type: 'work' }],
    displayName: `Pat Person${n}`,
    externalId: `00u${n}`,
    active: true,
    ...overrides,
  };
}

/** Asserts the SCIM error schema: status as a string, the media type, scimType when given. */
export function isScimError(response: TestResponse, status: number, scimType?: string): string | undefined {
  const problems: string[] = [];
  if (response.status !== status) problems.push(`status ${response.status}, expected ${status}`);
  if (!/^application\/scim\+json/.test(response.headers.get('content-type') ?? ''))
    problems.push(`content-type ${response.headers.get('content-type')}`);
  const body = response.body ?? {};
  if (!Array.isArray(body.schemas) || body.schemas[0] !== SCHEMA.error) problems.push('schemas is not the Error URN');
  if (body.status !== String(status)) problems.push(`body status ${JSON.stringify(body.status)}`);
  if (scimType !== undefined && body.scimType !== scimType) problems.push(`scimType ${body.scimType}, expected ${scimType}`);
  if (typeof body.detail !== 'string') problems.push('no detail');
  return problems.length ? `${problems.join('; ')}: ${response.text.slice(0, 300)}` : undefined;
}
