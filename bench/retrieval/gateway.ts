// The retrieval benchmarks' gateway: the real one, started in-process on an embedded
// database in a temp data dir, with tenants and API keys made through the services,
// and a small client that calls its public API as an integration would.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { type AppContext, createContext } from '../../src/context.js';
import { buildApp } from '../../src/gateway/app.js';
import { loadConfig } from '../../src/platform/config.js';

export interface DocumentRecord {
  id: string;
  name: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  error: string | null;
  chunkCount: number;
  stage?: string | null;
}

/** Calls the API with the tenant's key; throws unless the status is one of `expect`. */
export type Call = (method: string, route: string, body: unknown, expect: number | number[]) => Promise<unknown>;

export interface BenchTenant {
  id: string;
  key: string;
  call: Call;
}

export interface InProcessGateway {
  ctx: AppContext;
  app: FastifyInstance;
  /** http://127.0.0.1:<port> */
  base: string;
  dataDir: string;
  /** A new tenant with an API key, and a client for it. */
  tenant(name: string): Promise<BenchTenant>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  logLevel: string;
  /** More configuration, as environment variables (GATEWAY_NODES…). */
  env?: Record<string, string>;
}

export async function startInProcessGateway(options: GatewayOptions): Promise<InProcessGateway> {
  // os.tmpdir(): the embedded database's Unix socket path must stay short.
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-retrieval-bench-'));
  let ctx: AppContext | undefined;
  let app: FastifyInstance | undefined;
  const close = async () => {
    await app?.close();
    await ctx?.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const config = loadConfig({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_TLS: 'off',
      GATEWAY_LOG_LEVEL: options.logLevel,
      GATEWAY_SECRET: randomBytes(32).toString('base64url'),
      ...options.env,
    });
    ctx = await createContext(config);
    app = await buildApp(ctx, { logStream: pino.destination({ dest: '/dev/null', sync: false }) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const context = ctx;
    return {
      ctx,
      app,
      base,
      dataDir,
      async tenant(name) {
        const tenant = await createTenant(context, `${name}-${randomBytes(3).toString('hex')}`);
        const { key } = await issueApiKey(context, tenant.id, { name }, null);
        return { id: tenant.id, key, call: api(base, key) };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export function api(base: string, key: string): Call {
  return async (method, route, body, expect) => {
    const isForm = body instanceof FormData;
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined || isForm ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const expected = Array.isArray(expect) ? expect : [expect];
    if (!expected.includes(response.status)) throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };
}
