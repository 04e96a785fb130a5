// The one place that reads the environment. Everything else receives a typed,
// validated Config; a bad value stops the start with a message naming the variable.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  host: string;
  port: number;
  tls: { enabled: boolean; certFile: string | undefined; keyFile: string | undefined };
  corsOrigins: string[];
  trustProxy: boolean;
  logLevel: string;
  secret: string | undefined;
  bootstrap: { tenant?: string; adminUsername?: string; adminPassword?: string; adminEmail?: string };
  auth: {
    issuer: string;
    accessTokenTtlMinutes: number;
    refreshTokenTtlDays: number;
    refreshReuseGraceSeconds: number;
    keyCacheTtlSeconds: number;
    loginMaxFailuresPerAccount: number;
    loginMaxFailuresPerAddress: number;
    loginThrottleWindowSeconds: number;
    twoFactorMaxAttemptsPerChallenge: number;
    twoFactorMaxFailuresPerAccount: number;
  };
  http: { bodyLimitBytes: number; requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number };
  lastUsedFlushSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
  }
}

type Env = Record<string, string | undefined>;

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

  return {
    dataDir: path.resolve(read.string('GATEWAY_DATA_DIR') ?? './data'),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    host: read.string('HOST') ?? '127.0.0.1',
    port: read.int('PORT', 8443, 0, 65535),
    tls: { enabled: tlsMode === 'on', certFile, keyFile },
    corsOrigins: read.list('GATEWAY_CORS_ORIGINS').map((origin) => read.origin('GATEWAY_CORS_ORIGINS', origin)),
    trustProxy: read.oneOf('GATEWAY_TRUST_PROXY', ['on', 'off'], 'off') === 'on',
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
      loginMaxFailuresPerAccount: read.int('GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1, 1000),
      loginMaxFailuresPerAddress: read.int('GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1, 100000),
      loginThrottleWindowSeconds: read.int('GATEWAY_LOGIN_THROTTLE_WINDOW_SECONDS', 900, 1, 86400),
      twoFactorMaxAttemptsPerChallenge: read.int('GATEWAY_2FA_MAX_ATTEMPTS_PER_CHALLENGE', 5, 1, 100),
      twoFactorMaxFailuresPerAccount: read.int('GATEWAY_2FA_MAX_FAILURES_PER_ACCOUNT', 10, 1, 1000),
    },
    http: {
      bodyLimitBytes: read.int('GATEWAY_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 512 * 1024 * 1024),
      requestTimeoutMs: read.int('GATEWAY_REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000),
      headersTimeoutMs: read.int('GATEWAY_HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000),
      keepAliveTimeoutMs: read.int('GATEWAY_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 600_000),
    },
    lastUsedFlushSeconds: read.int('GATEWAY_LAST_USED_FLUSH_SECONDS', 30, 1, 3600),
  };
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

class Reader {
  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  }

  list(name: string): string[] {
    return (this.string(name) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, 'is not a valid URL');
    }
    if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
    return raw;
  }

  origin(name: string, value: string): string {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(name, `has an entry that is not an origin: "${value}"`);
    }
    if (parsed.origin === 'null' || parsed.origin !== value.replace(/\/$/, '')) {
      throw new ConfigError(name, `entries must be bare origins like https://app.example.com, got "${value}"`);
    }
    return parsed.origin;
  }
}
