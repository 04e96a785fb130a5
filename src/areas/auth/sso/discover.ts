// POST /api/auth/sso/discover {email}: which connection signs this address in, by its
// domain. The answer has one shape whether or not a connection serves the domain (an
// empty list: "use a password"), and the calls are rate limited per address like
// sign-in attempts, so the route cannot be used to list which companies are tenants at
// speed. A domain is matched only against enabled connections' allowedEmailDomains,
// and a domain that connections of more than one tenant claim is answered with
// nothing: a tenant cannot take over another's sign-in page by claiming its domain.
import type { SsoDeps } from './deps.js';
import { connectionUrls } from './connections.js';
import { connectionRepository } from './repository.js';
import type { DiscoverResponse } from './schemas.js';
import type { Throttle } from '../sessions/throttle.js';

export const discoverThrottleKey = (address: string) => `sso-discover:ip:${address}`;

export async function discoverConnections(
  deps: Pick<SsoDeps, 'db' | 'config'>,
  throttle: Throttle,
  email: string,
  address: string,
  origin: string,
): Promise<DiscoverResponse> {
  const attempt = await throttle.begin([{ key: discoverThrottleKey(address), max: deps.config.sso.discoverMaxPerAddress }]);
  try {
    // Every look-up counts, found or not.
    await attempt.fail();
    const at = email.lastIndexOf('@');
    const domain =
      at > 0
        ? email
            .slice(at + 1)
            .trim()
            .toLowerCase()
        : '';
    const rows = domain ? await connectionRepository.byDomain(deps.db, domain) : [];
    if (new Set(rows.map((row) => row.tenant_id)).size !== 1) return { connections: [] };
    return { connections: rows.map((row) => ({ id: row.id, name: row.name, startUrl: connectionUrls(origin, row.id).startUrl })) };
  } finally {
    attempt.end();
  }
}
