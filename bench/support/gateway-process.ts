// Child process: the real gateway, started the way `gateway start` starts it
// (startServer: migrated embedded database, request log to stdout, asynchronous),
// configured from the environment the parent sets (GATEWAY_NODES pointing at the
// instant upstream, GATEWAY_TLS=off, GATEWAY_LOCAL_ENGINE=off, a fresh data dir).
// Before reporting ready it creates a tenant and an API key through the services,
// as the CLI would, and hands the plaintext key to the parent.
import { loadConfig } from '../../src/platform/config.js';
import { startServer } from '../../src/server.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { announceReady } from './children.js';

// tsx turns source maps on; compiled production code runs without them (they make every Error costlier).
process.setSourceMapsEnabled(false);

export interface GatewayInfo {
  url: string;
  key: string;
  tenantId: string;
}

try {
  const config = loadConfig(process.env);
  // handleSignals: SIGTERM stops the server cleanly, so a --cpu-prof profile is written.
  const server = await startServer(config, { handleSignals: true, print: () => {} });
  const tenant = await createTenant(server.ctx.db, 'bench');
  const { key } = await issueApiKey(server.ctx, tenant.id, { name: 'bench' }, null);
  // Database queries so far: the cached key path and the batched usage log make none per request.
  announceReady({ url: server.url, key, tenantId: tenant.id } satisfies GatewayInfo, () => ({ dbQueries: server.ctx.db.stats.queries }));
} catch (error) {
  process.stderr.write(`gateway child: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
}
