// Child process: the real gateway, started the way `gateway start` starts it
// (startServer: migrated embedded database, request log to stdout, asynchronous),
// configured from the environment the parent sets (GATEWAY_NODES pointing at the
// instant upstream, GATEWAY_TLS=off, GATEWAY_LOCAL_ENGINE=off, a fresh data dir).
// Before reporting ready it creates a tenant and an API key through the services,
// as the CLI would, and hands the plaintext key to the parent.
//
// The gateway itself is loaded from the compiled build (`dist/`, made by `npm run
// build`, which the bench scripts run first), as production runs it: this file runs
// under tsx, but tsx leaves plain .js modules untouched, so the measured code carries
// neither tsx's name-keeping helpers nor source maps.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { announceReady } from './children.js';

type Server = typeof import('../../src/server/start.js');
type Config = typeof import('../../src/platform/config.js');
type Tenants = typeof import('../../src/areas/auth/tenants/service.js');
type ApiKeys = typeof import('../../src/areas/auth/api-keys/service.js');

export interface GatewayInfo {
  url: string;
  key: string;
  tenantId: string;
}

// tsx turns source maps on for this process; production runs without them (they make every Error costlier).
process.setSourceMapsEnabled(false);

const LOOP_TICK_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_TICK_MS });
loopDelay.enable();
const gc = { count: 0, ms: 0, longest: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.count++;
    gc.ms += entry.duration;
    gc.longest = Math.max(gc.longest, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

const dist = (module: string) => new URL(`../../dist/${module}`, import.meta.url).href;

try {
  if (!existsSync(fileURLToPath(dist('server/start.js')))) throw new Error('no compiled build in dist/: run `npm run build` first');
  const { loadConfig } = (await import(dist('platform/config.js'))) as Config;
  const { startServer } = (await import(dist('server/start.js'))) as Server;
  const { createTenant } = (await import(dist('areas/auth/tenants/service.js'))) as Tenants;
  const { issueApiKey } = (await import(dist('areas/auth/api-keys/service.js'))) as ApiKeys;
  const config = loadConfig(process.env);
  // handleSignals: SIGTERM stops the server cleanly, so a --cpu-prof profile is written.
  const server = await startServer(config, { handleSignals: true, print: () => {} });
  const tenant = await createTenant(server.ctx, 'bench');
  const { key } = await issueApiKey(server.ctx, tenant.id, { name: 'bench' }, null);
  announceReady({ url: server.url, key, tenantId: tenant.id } satisfies GatewayInfo, () => ({
    // Database queries so far: the cached key path and the batched usage log make none per request.
    dbQueries: server.ctx.db.stats.queries,
    ...pausesSinceLastAsked(),
  }));
} catch (error) {
  process.stderr.write(`gateway child: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
}

// How long the event loop stalled, and how much of that was garbage collection, since
// the parent last asked: tells the gateway's own pauses from the machine's when
// latency percentiles move. A 10 ms timer resolution keeps the probe itself cheap.
function pausesSinceLastAsked(): Record<string, number> {
  const answer = {
    // The histogram holds whole timer intervals: what is beyond the tick is the stall.
    loopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_TICK_MS),
    loopDelayMaxMs: Math.max(0, loopDelay.max / 1e6 - LOOP_TICK_MS),
    gcPauses: gc.count,
    gcPauseMs: gc.ms,
    gcLongestPauseMs: gc.longest,
  };
  loopDelay.reset();
  Object.assign(gc, { count: 0, ms: 0, longest: 0 });
  return answer;
}
