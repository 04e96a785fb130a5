// Starts the gateway child (gateway-process.ts) against an upstream, on a fresh data
// dir, and waits until a chat completion goes through it: the router learns the
// upstream's models from its first listing, which may come a moment after start.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { startChild, type Child } from './children.js';
import { gatewayRequestBody } from './fixtures.js';
import type { GatewayInfo } from './gateway-process.js';
import { START_NODE_FLAGS } from '../../src/cli/start-flags.js';
import { preparedWordVectors } from './word-vectors.js';

export interface GatewayChild extends Child<GatewayInfo> {
  chatUrl: string;
  headers: Record<string, string>;
  /** Stops the child and removes its data dir. */
  close(): Promise<void>;
}

export interface GatewayOptions {
  upstreamUrl: string;
  logLevel: string;
  nodeArgs?: string[];
  name?: string;
  /** More environment for the gateway (e.g. GATEWAY_METRICS_TOKEN). */
  env?: Record<string, string>;
}

/** The node flags every documented way to start runs the gateway with (bin/gateway.js adds them to `start`). */
export function productionNodeFlags(): string[] {
  return [...START_NODE_FLAGS];
}

export async function startGateway(options: GatewayOptions): Promise<GatewayChild> {
  // os.tmpdir(): the embedded database's Unix socket paths must stay short.
  const wordVectors = await preparedWordVectors();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  let child: Child<GatewayInfo>;
  try {
    child = await startChild<GatewayInfo>(options.name ?? 'gateway', './gateway-process.ts', {
      nodeArgs: [...productionNodeFlags(), ...(options.nodeArgs ?? [])],
      env: {
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_TLS: 'off',
        HOST: '127.0.0.1',
        PORT: '0',
        GATEWAY_LOG_LEVEL: options.logLevel,
        GATEWAY_LOCAL_ENGINE: 'off',
        GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: options.upstreamUrl, name: 'instant-upstream' }]),
        GATEWAY_SECRET: randomBytes(32).toString('base64url'),
        ...wordVectors,
        ...options.env,
      },
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const gateway: GatewayChild = {
    ...child,
    chatUrl: `${child.info.url}/api/llm/v1/chat/completions`,
    headers: { 'x-api-key': child.info.key },
    async close() {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await waitForChat(gateway);
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return gateway;
}

async function waitForChat(gateway: GatewayChild, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await request(gateway.chatUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gateway.headers },
      body: gatewayRequestBody(false),
    });
    last = `${answer.statusCode} ${(await answer.body.text()).slice(0, 300)}`;
    if (answer.statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`chat/completions through the gateway never answered 200 (last: ${last})`);
}
