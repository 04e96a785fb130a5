// What single sign-on needs from the composition root: sign-in's parts (an SSO sign-in
// ends in the same session a password login does), the bus (role changes), encryption
// (client secrets, PKCE verifiers, ID tokens), and the IdP clients with their guarded
// outbound access. AppContext satisfies it.
import type { Config } from '../../../platform/config.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { Secrets } from '../../../platform/secrets.js';
import type { SessionDeps } from '../sessions/deps.js';
import type { IdpClients, OutboundAccess } from './providers.js';

export interface SsoDeps extends SessionDeps {
  bus: InvalidationBus;
  secrets: Pick<Secrets, 'hash' | 'encrypt' | 'decrypt'>;
  config: SessionDeps['config'] & { sso: Config['sso'] };
  auth: SessionDeps['auth'] & { sso: { clients: IdpClients; outbound: OutboundAccess } };
}
