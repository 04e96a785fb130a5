// Starts a real gateway on loopback over a fresh copy of the template database,
// with its log lines captured so tests can assert what never reaches them.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/platform/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { buildApp } from '../../src/gateway/app.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { createUser } from '../../src/areas/auth/users/service.js';
import type { RoleName } from '../../src/platform/identity.js';
import { AccessTokens } from '../../src/areas/auth/sessions/access-tokens.js';
import { TEMPLATE_DIR, TEMPLATE_DATABASE, TEST_TMP, WORD_VECTORS_FILE, adminUrl } from './paths.js';

export interface TestGateway {
  url: string;
  app: FastifyInstance;
  ctx: AppContext;
  dataDir: string;
  /** The environment it was configured from. */
  env: Record<string, string>;
  /** Everything the gateway logged so far, one JSON line per entry. */
  logs(): string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Stops this gateway (keeping its database) and starts a new one on the same data dir, database and secret. */
  restart(): Promise<TestGateway>;
  close(): Promise<void>;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is. */
  body?: string;
  /** Shorthand for `Authorization: Bearer <token>`. */
  token?: string;
  apiKey?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  // Parsed JSON body (or undefined); typed loosely on purpose: tests assert on it.
  body: any;
}

export interface GatewayOptions {
  /**
   * Holds the built-in embedder's preparation open until this settles, to look at what
   * happens meanwhile. Without it the gateway is returned once the embedder is ready (it
   * only loads the shared converted file here), so no test meets it half-prepared by chance.
   */
  holdBuiltInEmbedder?: Promise<void>;
}

export async function startGateway(env: Record<string, string> = {}, options: GatewayOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(path.join(TEST_TMP, 'gw-'));
  const database = await freshDatabase(dataDir);
  return launch(dataDir, database, options, {
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_TLS: 'off',
    GATEWAY_WORD_VECTORS_FILE: WORD_VECTORS_FILE,
    GATEWAY_LOG_LEVEL: 'info',
    GATEWAY_SECRET: randomBytes(32).toString('base64url'),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
}

async function launch(
  dataDir: string,
  database: { drop(): Promise<void> },
  options: GatewayOptions,
  env: Record<string, string>,
): Promise<TestGateway> {
  const config = loadConfig(env);
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const ctx = await createContext(config, () => {}, options);
  const app = await buildApp(ctx, { logStream });
  if (!options.holdBuiltInEmbedder && ctx.vector) await ctx.os.embedders.builtInReady();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  return {
    url,
    app,
    ctx,
    dataDir,
    env,
    logs: () => lines.join(''),
    request: (method, requestPath, options) => requestTo(url, method, requestPath, options),
    async restart() {
      await app.close();
      await ctx.close();
      return launch(dataDir, database, {}, env);
    },
    async close() {
      await app.close();
      await ctx.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One request to the gateway at `url`, its answer read whole (JSON parsed when it is JSON). */
export async function requestTo(url: string, method: string, requestPath: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(url + requestPath, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

// A copy of the migrated template: a data dir for PGlite, a cloned database on PostgreSQL.
export async function freshDatabase(dataDir: string): Promise<{ url?: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    cpSync(path.join(TEMPLATE_DIR, 'pgdata'), path.join(dataDir, 'pgdata'), { recursive: true });
    return { drop: async () => {} };
  }
  const name = `gateway_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl(serverUrl) });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl(serverUrl) });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * What the seeding helpers need: an in-process TestGateway, or a seeder beside gateway
 * processes (replica-process.ts) that holds the same database and secret.
 */
export interface Seedable {
  ctx: Pick<AppContext, 'db' | 'secrets' | 'tenantSettings'> & { config: { auth: { issuer: string } } };
}

export interface SeededTenant {
  tenantId: string;
  admin: { id: string; username: string; password: string };
}

let seq = 0;
/** A tenant with one admin user, created through the same services the CLI uses. */
export async function seedTenant(gw: Seedable, label = 'acme', roles: RoleName[] = ['admin']): Promise<SeededTenant> {
  const suffix = `${label}${++seq}${randomBytes(2).toString('hex')}`;
  const tenant = await createTenant(gw.ctx, `Tenant ${suffix}`);
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(gw.ctx, { tenantId: tenant.id, username: `admin-${suffix}`, password, roles });
  return { tenantId: tenant.id, admin: { id: user.id, username: user.username, password } };
}

export async function seedUser(gw: Seedable, tenantId: string, roles: RoleName[] = ['member'], email?: string) {
  const username = `user-${++seq}${randomBytes(2).toString('hex')}`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(gw.ctx, { tenantId, username, password, roles, ...(email ? { email } : {}) });
  return { id: user.id, username, password };
}

/** A real access token for a seeded user, issued directly so a test need not go through login. */
export async function tokenFor(gw: Seedable, userId: string, tenantId: string): Promise<string> {
  return (await new AccessTokens(gw.ctx.secrets, gw.ctx.config.auth.issuer, 5).issue(userId, tenantId)).token;
}

/** A problem body without its per-request correlation id, for comparing two answers. */
export function withoutCorrelation(body: Record<string, unknown>): Record<string, unknown> {
  const { correlationId, ...rest } = body;
  if (typeof correlationId !== 'string') throw new Error('problem body without a correlationId');
  return rest;
}
