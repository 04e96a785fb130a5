// The one place that reads the environment. Everything else receives a typed,
// validated Config; a bad value stops the start with a message naming the variable.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { availableParallelism } from 'node:os';
import { ConfigError, Reader, type Env } from './config-reader.js';
import { readStdioServers, type StdioServerConfig } from './mcp-stdio-config.js';

export { ConfigError };

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  /** Redis for coordination across replicas (cache invalidation, login throttling); unset: in-process. */
  redisUrl: string | undefined;
  host: string;
  port: number;
  /** Processes serving the listener (GATEWAY_WORKERS; `auto`: one per core); more than one only on PostgreSQL with Redis (server/workers.ts). */
  workers: number;
  tls: { enabled: boolean; certFile: string | undefined; keyFile: string | undefined };
  corsOrigins: string[];
  /** Proxy hops in front whose X-Forwarded-For entry is believed (GATEWAY_TRUST_PROXY; 0: none, the socket's address is the client's). */
  trustProxyHops: number;
  /** Interactive API docs at /docs (GATEWAY_API_DOCS); /openapi.json is served either way. */
  apiDocs: boolean;
  /** The web console at / (GATEWAY_CONSOLE; off: not served at all), from the directory `npm run build` writes it to. */
  console: { enabled: boolean; dir: string };
  logLevel: string;
  secret: string | undefined;
  bootstrap: { tenant?: string; adminUsername?: string; adminPassword?: string; adminEmail?: string };
  auth: {
    issuer: string;
    accessTokenTtlMinutes: number;
    refreshTokenTtlDays: number;
    refreshReuseGraceSeconds: number;
    keyCacheTtlSeconds: number;
    /** Sign-in throttling (areas/auth/sessions/throttle.ts): hard limits per (account, address) and per address… */
    loginMaxFailuresPerAccountAndAddress: number;
    loginMaxFailuresPerAddress: number;
    loginThrottleWindowSeconds: number;
    /** …and, per account across all addresses, a growing delay from this many failures on. */
    loginAccountBackoffAfterFailures: number;
    twoFactorMaxAttemptsPerChallenge: number;
    twoFactorMaxFailuresPerAccountAndAddress: number;
    twoFactorAccountBackoffAfterFailures: number;
    /** The growing delay's cap, for login and two-factor alike. */
    accountBackoffMaxSeconds: number;
  };
  http: {
    bodyLimitBytes: number;
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
    /** On shutdown, how long model calls in flight may run on before they are stopped. */
    shutdownGraceMs: number;
  };
  lastUsedFlushSeconds: number;
  /**
   * Background work held under a database lease (document ingestion, runs): renewed
   * every third of it; a replica that dies has its work taken over (ingestion) or
   * ended (runs) by another once the lease has run out.
   */
  jobLeaseSeconds: number;
  /** GET /metrics (Prometheus): on its own listener, and/or on the public one behind a bearer token; neither: off. */
  metrics: MetricsConfig;
  llm: LlmConfig;
  documents: DocumentsConfig;
  sso: SsoConfig;
}

/** Single sign-on (areas/auth/sso/). */
export interface SsoConfig {
  /**
   * GATEWAY_PUBLIC_URL: the origin browsers reach the gateway at, for the redirect URI an
   * IdP sends them back to (and the post-logout one). Unset: the origin each request
   * arrived at (its Host, or X-Forwarded-Host/-Proto from a trusted proxy).
   */
  publicUrl: string | undefined;
  /** How long a sign-in may take between /start and /callback (at most 10 minutes). */
  transactionTtlSeconds: number;
  /** Refused callbacks per address within the sign-in throttle's window (their own count, apart from password sign-in's). */
  maxRefusedCallbacksPerAddress: number;
  /** POST /api/auth/sso/discover calls per address within the same window. */
  discoverMaxPerAddress: number;
}

export interface MetricsConfig {
  /** GATEWAY_METRICS_PORT: /metrics alone on this port (no credential: reachable only where the host is). */
  port: number | undefined;
  host: string;
  /** GATEWAY_METRICS_TOKEN: /metrics on the public listener, only with `Authorization: Bearer <token>`. */
  token: string | undefined;
}

/** Documents, ingestion and retrieval (the os area). */
export interface DocumentsConfig {
  /** The largest file one upload may carry; counted while it streams in (413 beyond it). */
  uploadMaxBytes: number;
  /** Files in one multipart upload. */
  uploadMaxFiles: number;
  /** Documents extracted and embedded at once (and extraction worker threads kept, one per document in flight). */
  ingestConcurrency: number;
  /** Tries per document before it is marked failed. */
  ingestMaxAttempts: number;
  /** One extraction (PDF, DOCX…) may take this long before its worker is stopped. */
  extractTimeoutMs: number;
  /** An extraction worker's heap ceiling. */
  extractMaxMemoryMb: number;
  /** What a DOCX (a zip) or a PDF's compressed streams may expand to, in all. */
  extractMaxExpandedBytes: number;
  /** The built-in embedder's converted word vectors (default: in the data dir); data dirs may share one file. */
  wordVectorsFile: string | undefined;
  /** Chunk size and overlap, in tokens. */
  chunkTokens: number;
  chunkOverlapTokens: number;
}

/** A compute node named in GATEWAY_NODES: shared by every tenant, not editable through the API. */
export interface ConfiguredNode {
  engine: 'openai' | 'ollama';
  url: string;
  name: string;
  apiKey: string | undefined;
}

export interface LlmConfig {
  nodes: ConfiguredNode[];
  /** CIDR blocks a node URL may never resolve to (link-local, cloud metadata…). */
  nodeDenyCidrs: string[];
  /**
   * Also refused for URLs a tenant admin (not a platform admin) gives: their nodes
   * and model downloads. Loopback and private ranges by default, so one tenant
   * cannot reach (or port-scan through health checks) the operator's network.
   */
  tenantNodeDenyCidrs: string[];
  /** The embedded llama.cpp engine over GGUF files in `modelsDir`. */
  localEngine: boolean;
  modelsDir: string;
  localThreads: number;
  localContextSize: number;
  heartbeatSeconds: number;
  /** A chat stream whose engine has not answered within this long gets its 200 head and heartbeats (0: off). */
  streamEarlyHeadMs: number;
  healthIntervalSeconds: number;
  failuresBeforeCooldown: number;
  cooldownSeconds: number;
  maxAttempts: number;
  /** How long an engine may take to answer with headers (or its first frame). */
  upstreamTimeoutMs: number;
  pullMaxBytes: number;
  usageFlushSeconds: number;
  /**
   * The context window assumed for models: retrieved sources fill what the conversation and
   * the answer leave of it, and the persisted chat's history is trimmed to fit it.
   */
  ragContextTokens: number;
  /** How long a thread run may take, from its creation, before it is stopped as `expired` (OpenAI: 10 minutes). */
  runExpirySeconds: number;
  /** How long an MCP server's tool listing is reused, per (tenant, server), before it is listed again. */
  mcpListTtlSeconds: number;
  /** MCP servers run as child processes, from the file GATEWAY_MCP_STDIO_SERVERS names (never from the API). */
  mcpStdioServers: StdioServerConfig[];
}

// Addresses a compute node may never point at: link-local (which holds the cloud
// metadata endpoints 169.254.169.254 and fd00:ec2::254) and Alibaba's 100.100.100.200.
// Loopback and private ranges stay allowed: Ollama on localhost is the common case.
export const DEFAULT_NODE_DENY_CIDRS = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128', '100.100.100.200/32'];
export const DEFAULT_TENANT_NODE_DENY_CIDRS = [
  '0.0.0.0/8',
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '::/128',
  '::1/128',
  'fc00::/7',
];

// The package's own build (`npm run build` writes dist/console): two levels up from
// this file both as source (src/platform/) and as built (dist/platform/).
const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

/** Reads config from `env`, overlaid on the optional JSON file named by GATEWAY_CONFIG_FILE. */
export function loadConfig(env: Env = process.env): Config {
  const file = env.GATEWAY_CONFIG_FILE ? readConfigFile(env.GATEWAY_CONFIG_FILE) : {};
  const source: Env = { ...file, ...env };
  const read = new Reader(source);

  const tlsMode = read.oneOf('GATEWAY_TLS', ['on', 'off'], 'on');
  const certFile = read.string('GATEWAY_TLS_CERT');
  const keyFile = read.string('GATEWAY_TLS_KEY');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(certFile ? 'GATEWAY_TLS_KEY' : 'GATEWAY_TLS_CERT', 'must be set together with its pair');
  }
  const secret = read.string('GATEWAY_SECRET');
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('GATEWAY_SECRET', 'must be at least 32 characters');
  }
  const keyCacheTtlSeconds = read.int('GATEWAY_KEY_CACHE_TTL_SECONDS', 300, 0, 300);
  const dataDir = path.resolve(read.string('GATEWAY_DATA_DIR') ?? './data');

  return {
    dataDir,
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    host: read.string('HOST') ?? '127.0.0.1',
    port: read.int('PORT', 8443, 0, 65535),
    workers: readWorkers(read.string('GATEWAY_WORKERS')),
    tls: { enabled: tlsMode === 'on', certFile, keyFile },
    corsOrigins: read.list('GATEWAY_CORS_ORIGINS').map((origin) => read.origin('GATEWAY_CORS_ORIGINS', origin)),
    trustProxyHops: readTrustProxy(read.string('GATEWAY_TRUST_PROXY')),
    apiDocs: read.oneOf('GATEWAY_API_DOCS', ['on', 'off'], 'on') === 'on',
    console: {
      enabled: read.oneOf('GATEWAY_CONSOLE', ['on', 'off'], 'on') === 'on',
      dir: path.resolve(read.string('GATEWAY_CONSOLE_DIR') ?? DEFAULT_CONSOLE_DIR),
    },
    logLevel: read.oneOf('GATEWAY_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    secret,
    bootstrap: {
      tenant: read.string('GATEWAY_TENANT'),
      adminUsername: read.string('GATEWAY_ADMIN_USERNAME'),
      adminPassword: read.string('GATEWAY_ADMIN_PASSWORD'),
      adminEmail: read.string('GATEWAY_ADMIN_EMAIL'),
    },
    auth: {
      issuer: read.string('GATEWAY_JWT_ISSUER') ?? 'gateway',
      accessTokenTtlMinutes: read.int('GATEWAY_ACCESS_TOKEN_TTL_MINUTES', 120, 1, 7 * 24 * 60),
      refreshTokenTtlDays: read.int('GATEWAY_REFRESH_TOKEN_TTL_DAYS', 30, 1, 365),
      refreshReuseGraceSeconds: read.int('GATEWAY_REFRESH_REUSE_GRACE_SECONDS', 10, 0, 300),
      keyCacheTtlSeconds,
      ...readSignInThrottling(read, source),
    },
    http: {
      bodyLimitBytes: read.int('GATEWAY_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 512 * 1024 * 1024),
      requestTimeoutMs: read.int('GATEWAY_REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000),
      headersTimeoutMs: read.int('GATEWAY_HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000),
      keepAliveTimeoutMs: read.int('GATEWAY_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 600_000),
      shutdownGraceMs: read.int('GATEWAY_SHUTDOWN_GRACE_SECONDS', 8, 0, 3600) * 1000,
    },
    lastUsedFlushSeconds: read.int('GATEWAY_LAST_USED_FLUSH_SECONDS', 30, 1, 3600),
    jobLeaseSeconds: read.int('GATEWAY_JOB_LEASE_SECONDS', 30, 3, 3600),
    metrics: readMetrics(read),
    llm: {
      nodes: readNodes(read.string('GATEWAY_NODES')),
      nodeDenyCidrs: read.cidrList('GATEWAY_NODE_DENY_CIDRS', DEFAULT_NODE_DENY_CIDRS),
      tenantNodeDenyCidrs: read.cidrList('GATEWAY_TENANT_NODE_DENY_CIDRS', DEFAULT_TENANT_NODE_DENY_CIDRS),
      localEngine: read.oneOf('GATEWAY_LOCAL_ENGINE', ['on', 'off'], 'on') === 'on',
      modelsDir: path.resolve(read.string('GATEWAY_MODELS_DIR') ?? path.join(dataDir, 'models')),
      // llama.cpp's default (one thread per core) spins and collapses throughput on a busy small machine.
      localThreads: read.int('GATEWAY_LOCAL_THREADS', Math.max(1, Math.floor(availableParallelism() / 2)), 1, 256),
      localContextSize: read.int('GATEWAY_LOCAL_CONTEXT_SIZE', 4096, 64, 1_048_576),
      heartbeatSeconds: read.int('GATEWAY_STREAM_HEARTBEAT_SECONDS', 15, 1, 3600),
      streamEarlyHeadMs: read.int('GATEWAY_STREAM_EARLY_HEAD_MS', 3000, 0, 600_000),
      healthIntervalSeconds: read.int('GATEWAY_NODE_HEALTH_INTERVAL_SECONDS', 10, 1, 3600),
      failuresBeforeCooldown: read.int('GATEWAY_NODE_FAILURES_BEFORE_COOLDOWN', 3, 1, 1000),
      cooldownSeconds: read.int('GATEWAY_NODE_COOLDOWN_SECONDS', 30, 1, 86400),
      maxAttempts: read.int('GATEWAY_NODE_MAX_ATTEMPTS', 3, 1, 10),
      upstreamTimeoutMs: read.int('GATEWAY_UPSTREAM_TIMEOUT_MS', 120_000, 100, 3_600_000),
      pullMaxBytes: read.int('GATEWAY_PULL_MAX_BYTES', 64 * 1024 ** 3, 1024, Number.MAX_SAFE_INTEGER),
      usageFlushSeconds: read.int('GATEWAY_USAGE_FLUSH_SECONDS', 2, 1, 3600),
      ragContextTokens: read.int('GATEWAY_RAG_CONTEXT_TOKENS', 4096, 512, 1_048_576),
      runExpirySeconds: read.int('GATEWAY_RUN_EXPIRY_SECONDS', 600, 1, 86_400),
      mcpListTtlSeconds: read.int('GATEWAY_MCP_LIST_TTL_SECONDS', 60, 0, 86_400),
      mcpStdioServers: readStdioServers(read.string('GATEWAY_MCP_STDIO_SERVERS')),
    },
    documents: readDocuments(read),
    sso: readSso(read),
  };
}

function readSso(read: Reader): SsoConfig {
  const publicUrl = read.string('GATEWAY_PUBLIC_URL');
  return {
    publicUrl: publicUrl === undefined ? undefined : read.origin('GATEWAY_PUBLIC_URL', publicUrl),
    transactionTtlSeconds: read.int('GATEWAY_SSO_TRANSACTION_TTL_SECONDS', 600, 1, 600),
    maxRefusedCallbacksPerAddress: read.int('GATEWAY_SSO_MAX_REFUSED_CALLBACKS_PER_ADDRESS', 20, 1, 100000),
    discoverMaxPerAddress: read.int('GATEWAY_SSO_DISCOVER_MAX_PER_ADDRESS', 60, 1, 100000),
  };
}

// A bound well above any core count a gateway host has: 1000 is a typo, not a plan.
const MAX_WORKERS = 256;

function readWorkers(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (raw.toLowerCase() === 'auto') return Math.min(MAX_WORKERS, availableParallelism());
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= MAX_WORKERS))
    throw new ConfigError('GATEWAY_WORKERS', `must be a whole number from 1 to ${MAX_WORKERS}, or "auto" (one per core), got "${raw}"`);
  return value;
}

function readMetrics(read: Reader): MetricsConfig {
  const rawPort = read.string('GATEWAY_METRICS_PORT');
  const port = rawPort === undefined ? undefined : read.int('GATEWAY_METRICS_PORT', 0, 1, 65535);
  const token = read.string('GATEWAY_METRICS_TOKEN');
  // A scraper's secret like any other: short ones can be guessed.
  if (token !== undefined && token.length < 16) throw new ConfigError('GATEWAY_METRICS_TOKEN', 'must be at least 16 characters');
  return { port, host: read.string('GATEWAY_METRICS_HOST') ?? '127.0.0.1', token };
}

function readDocuments(read: Reader): DocumentsConfig {
  const chunkTokens = read.int('GATEWAY_CHUNK_TOKENS', 350, 32, 8192);
  return {
    uploadMaxBytes: read.int('GATEWAY_UPLOAD_MAX_BYTES', 32 * 1024 ** 2, 1, 4 * 1024 ** 3),
    uploadMaxFiles: read.int('GATEWAY_UPLOAD_MAX_FILES', 20, 1, 1000),
    ingestConcurrency: read.int('GATEWAY_INGEST_CONCURRENCY', 2, 1, 64),
    ingestMaxAttempts: read.int('GATEWAY_INGEST_MAX_ATTEMPTS', 3, 1, 100),
    extractTimeoutMs: read.int('GATEWAY_EXTRACT_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
    extractMaxMemoryMb: read.int('GATEWAY_EXTRACT_MAX_MEMORY_MB', 512, 32, 65536),
    extractMaxExpandedBytes: read.int('GATEWAY_EXTRACT_MAX_EXPANDED_BYTES', 256 * 1024 ** 2, 1024, 16 * 1024 ** 3),
    wordVectorsFile: read.string('GATEWAY_WORD_VECTORS_FILE'),
    chunkTokens,
    chunkOverlapTokens: read.int('GATEWAY_CHUNK_OVERLAP_TOKENS', 50, 0, Math.floor(chunkTokens / 2)),
  };
}

function readNodes(raw: string | undefined): ConfiguredNode[] {
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('GATEWAY_NODES', 'must be a JSON array of {engine, url, name?, apiKey?}');
  }
  if (!Array.isArray(parsed)) throw new ConfigError('GATEWAY_NODES', 'must be a JSON array of {engine, url, name?, apiKey?}');
  return parsed.map((entry: unknown, index) => {
    const at = `entry ${index}`;
    if (!entry || typeof entry !== 'object') throw new ConfigError('GATEWAY_NODES', `${at} must be an object`);
    const { engine, url, name, apiKey } = entry as Record<string, unknown>;
    if (engine !== 'openai' && engine !== 'ollama') throw new ConfigError('GATEWAY_NODES', `${at}: engine must be "openai" or "ollama"`);
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url) || !URL.canParse(url))
      throw new ConfigError('GATEWAY_NODES', `${at}: url must be an http(s) URL`);
    if (name !== undefined && (typeof name !== 'string' || !name.trim()))
      throw new ConfigError('GATEWAY_NODES', `${at}: name must be a non-empty string`);
    if (apiKey !== undefined && typeof apiKey !== 'string') throw new ConfigError('GATEWAY_NODES', `${at}: apiKey must be a string`);
    return { engine, url, name: (name as string | undefined)?.trim() ?? `${engine}-${index + 1}`, apiKey: apiKey as string | undefined };
  });
}

function readConfigFile(file: string): Env {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError('GATEWAY_CONFIG_FILE', `could not be read as JSON (${(error as Error).message})`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('GATEWAY_CONFIG_FILE', 'must hold a JSON object of VARIABLE: value pairs');
  }
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v === null ? undefined : String(v)]));
}

// A client sets X-Forwarded-For to anything it likes; only the entries the proxies in
// front appended are true, so `on` believes one hop (the address the nearest proxy
// saw) and a number believes that many, never the client-written start of the list.
function readTrustProxy(raw: string | undefined): number {
  if (raw === undefined || raw.toLowerCase() === 'off') return 0;
  if (raw.toLowerCase() === 'on') return 1;
  if (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 10) return Number(raw);
  throw new ConfigError('GATEWAY_TRUST_PROXY', `must be on, off, or the number of proxy hops (1-10), got "${raw}"`);
}

function readSignInThrottling(read: Reader, source: Env) {
  // The per-account limits became per (account, address) plus an account-wide delay: say so rather than ignore them.
  for (const step of ['LOGIN', '2FA'])
    if (source[`GATEWAY_${step}_MAX_FAILURES_PER_ACCOUNT`] !== undefined)
      throw new ConfigError(
        `GATEWAY_${step}_MAX_FAILURES_PER_ACCOUNT`,
        `is no longer read: use GATEWAY_${step}_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS and GATEWAY_${step}_ACCOUNT_BACKOFF_AFTER_FAILURES`,
      );
  // The account-wide delay must start above one address's limit, or one address could slow the owner down.
  const limits = (step: string, perPair: number, backoffAfter: number) => {
    const pair = read.int(`GATEWAY_${step}_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS`, perPair, 1, 1000);
    const after = read.int(`GATEWAY_${step}_ACCOUNT_BACKOFF_AFTER_FAILURES`, backoffAfter, pair + 1, 100000);
    return { pair, after };
  };
  const login = limits('LOGIN', 5, 50);
  const twoFactor = limits('2FA', 10, 20);
  return {
    loginMaxFailuresPerAccountAndAddress: login.pair,
    loginMaxFailuresPerAddress: read.int('GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1, 100000),
    loginThrottleWindowSeconds: read.int('GATEWAY_LOGIN_THROTTLE_WINDOW_SECONDS', 900, 1, 86400),
    loginAccountBackoffAfterFailures: login.after,
    twoFactorMaxAttemptsPerChallenge: read.int('GATEWAY_2FA_MAX_ATTEMPTS_PER_CHALLENGE', 5, 1, 100),
    twoFactorMaxFailuresPerAccountAndAddress: twoFactor.pair,
    twoFactorAccountBackoffAfterFailures: twoFactor.after,
    accountBackoffMaxSeconds: read.int('GATEWAY_ACCOUNT_BACKOFF_MAX_SECONDS', 300, 1, 86400),
  };
}
