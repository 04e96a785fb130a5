// The composition root: everything a running gateway holds, built once at start
// and handed to the routes. Tests build the same thing on a copied database.
import { readFileSync } from 'node:fs';
import type { Config } from './platform/config.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import type { InvalidationBus } from './platform/coordination/invalidation-bus.js';
import type { FailureCounter } from './platform/coordination/failure-counter.js';
import { createCoordination, type Coordination } from './platform/coordination/coordination.js';
import { deriveSecrets, generateMasterSecret, type Secrets } from './platform/secrets.js';
import { ApiKeyValidator } from './areas/auth/api-keys/validator.js';
import { LastUsedRecorder } from './areas/auth/api-keys/last-used.js';
import { AccessTokens } from './areas/auth/sessions/access-tokens.js';
import { AccountStates } from './areas/auth/users/account-state.js';
import { credentialResolver, type CredentialResolver } from './areas/auth/credentials.js';
import type { SsoHooks } from './areas/auth/sessions/deps.js';
import { IdpClients, type OutboundAccess, type UrlScope } from './areas/auth/sso/providers.js';
import { ssoHooks } from './areas/auth/sso/logout.js';
import { guardedAgent, guardedFetch } from './areas/llm/mcp/registry/guarded-fetch.js';
import { ScimTokenValidator } from './areas/auth/scim-tokens/validator.js';
import type { TenantSettingsFields } from './areas/auth/tenants/schemas.js';
import { createLlmServices, type LlmServices } from './areas/llm/services.js';
import { tenantLlmSettings } from './areas/llm/settings/service.js';
import { usageReports } from './areas/llm/usage/reports.js';
import type { UsageSource } from './areas/auth/usage-reports/schemas.js';
import { embedTexts } from './areas/llm/embeddings/service.js';
import { rerankTexts } from './areas/llm/rerank/service.js';
import { createOsServices, type OsServices } from './areas/os/services.js';
import { ingestionQueueDepth } from './areas/os/ingestion/queue-depth.js';
import type { GatewayMetrics } from './platform/metrics/metrics.js';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export interface AppContext {
  config: Config;
  db: Database;
  secrets: Secrets;
  bus: InvalidationBus;
  failures: FailureCounter;
  /** In-process, or across replicas on Redis (REDIS_URL), and whether Redis answers now. */
  coordination: Pick<Coordination, 'status' | 'setLog'>;
  /** Whether pgvector is installed; features that need vectors answer 503 without it. */
  vector: boolean;
  auth: {
    apiKeys: ApiKeyValidator;
    lastUsed: LastUsedRecorder;
    accessTokens: AccessTokens;
    accounts: AccountStates;
    scimTokens: ScimTokenValidator;
    credentials: CredentialResolver;
    /** Single sign-on: the IdP clients, and the outbound access they reach IdPs through (the llm area's URL guard). */
    sso: { clients: IdpClients; outbound: OutboundAccess };
    /** What single sign-on adds to password sign-in and sign-out (ssoOnly, the IdP's end-session URL). */
    ssoHooks: SsoHooks;
  };
  /** Compute nodes, the model router, usage recording (src/areas/llm/services.ts). */
  llm: LlmServices;
  /** Embedders, document ingestion, retrieval (src/areas/os/services.ts). */
  os: OsServices;
  /** What the tenant record carries of other areas: the llm area's settings (src/areas/llm/settings/). */
  tenantSettings: TenantSettingsFields;
  /** What the tenant usage report reads: the llm area's usage records (src/areas/llm/usage/reports.ts). */
  usage: UsageSource;
  /** The document ingestion runner: told when uploads have queued documents. */
  ingestion: { wake(): void };
  /** What GET /metrics exports; undefined when it is not served (GATEWAY_METRICS_PORT/TOKEN unset): nothing is collected then. */
  metrics: GatewayMetrics | undefined;
  /** Whether a tenant can embed with `model` (a collection's embeddingModel); throws an AppError 400 if not. */
  checkEmbeddingModel(tenantId: string, model: string): Promise<{ dimensions: number | null }>;
  close(): Promise<void>;
}

export async function createContext(
  config: Config,
  log: (message: string) => void = () => {},
  options: {
    onDatabaseCrash?: (error: Error) => void;
    /** For tests: holds the built-in embedder's preparation open until this settles (os/services.ts). */
    holdBuiltInEmbedder?: Promise<void>;
  } = {},
): Promise<AppContext> {
  const db = await openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    ...(options.onDatabaseCrash ? { onCrash: options.onDatabaseCrash } : {}),
  });
  try {
    // Without pgvector the context still opens (vector: false); the server's banner warns once.
    const migration = await migrate(db, log);
    const secrets = deriveSecrets(config.secret ?? (await storedMasterSecret(db)));
    const coordination = createCoordination({
      redisUrl: config.redisUrl,
      keyedHash: (value) => secrets.hash('coordination', value),
      loginThrottleWindowSeconds: config.auth.loginThrottleWindowSeconds,
    });
    const { bus, failures } = coordination;
    const lastUsed = new LastUsedRecorder(db, config.lastUsedFlushSeconds);
    const apiKeys = new ApiKeyValidator(db, secrets, bus, lastUsed, config.auth.keyCacheTtlSeconds * 1000);
    const accessTokens = new AccessTokens(secrets, config.auth.issuer, config.auth.accessTokenTtlMinutes);
    const accounts = new AccountStates(db, bus);
    const scimTokens = new ScimTokenValidator(db, secrets);
    // Starts probing the compute nodes in the background; nothing here waits for them.
    const llm = createLlmServices({ config, db, secrets, bus, limits: coordination.limits });
    // IdPs are reached like MCP servers: every URL and every connection's address held to the deny lists.
    const ssoAgents = { platform: guardedAgent(llm.outboundGuard('platform')), tenant: guardedAgent(llm.outboundGuard('tenant')) };
    const ssoFetch = {
      platform: guardedFetch(llm.outboundGuard('platform'), ssoAgents.platform),
      tenant: guardedFetch(llm.outboundGuard('tenant'), ssoAgents.tenant),
    };
    const outbound: OutboundAccess = { checkUrl: (url, scope) => llm.checkUrl(url, scope), fetch: (scope: UrlScope) => ssoFetch[scope] };
    const idpClients = new IdpClients(outbound, (ciphertext) => secrets.decrypt(ciphertext));
    // Before anything can start a run: on the embedded database every open run is a dead process's.
    await llm.recoverRuns();
    // The os area reaches the nodes' embedding and rerank models only through these functions.
    const os = createOsServices({
      config,
      db,
      vector: migration.vector,
      nodeEmbedding: (tenantId, model, texts) =>
        embedTexts({ router: llm.router, timeoutMs: config.llm.upstreamTimeoutMs }, tenantId, model, texts),
      modelCheck: async (tenantId, model) => void (await llm.router.resolveModel(tenantId, model)),
      nodeRerank: (tenantId, model, query, documents) =>
        rerankTexts({ router: llm.router, timeoutMs: config.llm.upstreamTimeoutMs }, tenantId, model, query, documents),
      ...(options.holdBuiltInEmbedder ? { holdBuiltInEmbedder: options.holdBuiltInEmbedder } : {}),
    });
    // Loaded only when served: prom-client (and the @opentelemetry/api it brings) stays out of a default start.
    const metrics =
      config.metrics.port !== undefined || config.metrics.token !== undefined
        ? new (await import('./platform/metrics/metrics.js')).GatewayMetrics({
            caches: {
              api_keys: apiKeys.cacheStats,
              access_tokens: accessTokens.cacheStats,
              accounts: accounts.cacheStats,
              tenant_settings: llm.settingsCacheStats,
            },
            ingestionQueue: () => ingestionQueueDepth(db),
          })
        : undefined;
    if (metrics) llm.observe(metrics);
    return {
      config,
      db,
      secrets,
      bus,
      failures,
      coordination,
      vector: migration.vector,
      auth: {
        apiKeys,
        lastUsed,
        accessTokens,
        accounts,
        scimTokens,
        credentials: credentialResolver(apiKeys, accessTokens, accounts, scimTokens),
        sso: { clients: idpClients, outbound },
        ssoHooks: ssoHooks({ db, secrets, clients: idpClients }),
      },
      llm,
      os,
      tenantSettings: tenantLlmSettings,
      usage: usageReports({ db, recorder: llm.usage }),
      ingestion: os.ingestion,
      checkEmbeddingModel: (tenantId, model) => os.embedders.check(tenantId, model),
      metrics,
      async close() {
        // Ingestion first (it calls engines), then engines (their in-flight work ends),
        // then the usage they recorded is flushed, then the database goes.
        await os.close();
        await llm.close();
        await Promise.all([ssoAgents.platform.close(), ssoAgents.tenant.close()]);
        await lastUsed.close();
        await coordination.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

// Without GATEWAY_SECRET the master secret is generated on first start and kept in
// the database, so replicas sharing the database agree on every derived key.
async function storedMasterSecret(db: Database): Promise<string> {
  await db.query(`INSERT INTO platform_secrets (name, value) VALUES ('master', $1) ON CONFLICT (name) DO NOTHING`, [
    generateMasterSecret(),
  ]);
  const [row] = await db.query<{ value: string }>(`SELECT value FROM platform_secrets WHERE name = 'master'`);
  return row!.value;
}
