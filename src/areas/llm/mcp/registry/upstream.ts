// Connections to upstream MCP servers: the SDK's Client over Streamable HTTP, with
// the SDK's version negotiation (`auto`: server/discover for 2026-07-28 servers, the
// 2025 `initialize` handshake otherwise), through the guarded fetch, carrying the
// server's own credential and nothing of the caller's (the transport is built here
// from the stored settings alone; no header of the incoming request reaches it).
// Connected clients are pooled per (tenant, server, version of its settings).
//
// A server that does not speak Streamable HTTP (its POST answered 4xx, as the spec's
// backwards-compatibility rule says) is reached with the legacy HTTP+SSE transport
// (2024-11-05): a GET opens the event stream, whose `endpoint` event names where to
// POST. Through the same guarded fetch, with the same credential: every URL is checked
// against the deny list before it is requested, the announced endpoint included, and
// the SDK refuses an endpoint on another origin outright. Which transport worked is
// remembered per pool key, so a legacy server is not probed again on each connection.
import {
  Client,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type AuthProvider,
  type Transport,
} from '@modelcontextprotocol/client';
import type { McpAuthInput } from './schemas.js';
import type { ClientCredentialsTokens } from './client-credentials.js';
import type { Fetch } from './guarded-fetch.js';
import { connectClient } from './connect-client.js';

export interface UpstreamTarget {
  /** The pool key: tenant, server id and the version of its settings (updatedAt). */
  key: string;
  /** The server and the version of its settings, whoever's tenant connects: what the transport it speaks is remembered by. */
  server: string;
  url: string;
  auth: McpAuthInput;
  /** The fetch held to the deny list of whoever gave the URLs. */
  fetch: Fetch;
  /** For the connect handshake: the server's timeoutSeconds. */
  timeoutMs: number;
}

const CLIENT_INFO = { name: 'gateway-mcp', version: '1.0.0' };
// A pooled connection unused this long is closed (its upstream session, if any, ended).
const IDLE_MS = 5 * 60_000;

interface Pooled {
  client: Client;
  lastUsed: number;
}

export class UpstreamPool {
  private readonly clients = new Map<string, Pooled>();
  private readonly connecting = new Map<string, Promise<Client>>();
  /**
   * Servers (`UpstreamTarget.server`) that answered only the legacy HTTP+SSE transport.
   * Each names the version of the server's settings, so a changed URL is probed afresh.
   */
  private readonly legacy = new Set<string>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly tokens: ClientCredentialsTokens,
    private readonly onToolsChanged: (key: string) => void,
  ) {
    this.sweep = setInterval(() => this.closeIdle(), IDLE_MS / 5);
    this.sweep.unref();
  }

  /** A connected client for `target`; concurrent callers share one handshake. */
  async client(target: UpstreamTarget): Promise<Client> {
    const pooled = this.clients.get(target.key);
    if (pooled) {
      pooled.lastUsed = Date.now();
      return pooled.client;
    }
    let connecting = this.connecting.get(target.key);
    if (!connecting) {
      connecting = this.connect(target).finally(() => this.connecting.delete(target.key));
      this.connecting.set(target.key, connecting);
    }
    return connecting;
  }

  /** Forgets (and closes) the connection of `key`: after a failure, or when its server changed or went. */
  drop(key: string): void {
    const pooled = this.clients.get(key);
    if (!pooled) return;
    this.clients.delete(key);
    void pooled.client.close().catch(() => {});
  }

  /** Drops every connection whose key starts with `prefix` (a server's, across tenants and versions). */
  dropMatching(predicate: (key: string) => boolean): void {
    for (const key of [...this.clients.keys()]) if (predicate(key)) this.drop(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const all = [...this.clients.values()];
    this.clients.clear();
    this.legacy.clear();
    await Promise.all(all.map((p) => p.client.close().catch(() => {})));
  }

  /** The transport that worked for `target` before, else Streamable HTTP with a fallback to HTTP+SSE on a 4xx. */
  private async connect(target: UpstreamTarget): Promise<Client> {
    if (this.legacy.has(target.server)) return this.open(target, 'sse');
    try {
      return await this.open(target, 'streamable');
    } catch (error) {
      if (!speaksOnlyLegacy(error)) throw error;
      const client = await this.open(target, 'sse');
      this.legacy.add(target.server);
      return client;
    }
  }

  private async open(target: UpstreamTarget, kind: 'streamable' | 'sse'): Promise<Client> {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: kind === 'sse' ? 'legacy' : 'auto' } });
    client.setNotificationHandler('notifications/tools/list_changed', () => this.onToolsChanged(target.key));
    const options = { fetch: target.fetch, ...credentialOptions(target, this.tokens) };
    const transport: Transport =
      kind === 'sse'
        ? new SSEClientTransport(new URL(target.url), options)
        : // A client-credentials token cannot be widened by re-authorizing.
          new StreamableHTTPClientTransport(new URL(target.url), { ...options, onInsufficientScope: 'throw' });
    // A connection the upstream ends (its process restarted) is forgotten, so the next use reconnects.
    await connectClient(client, transport, target.timeoutMs, () => {
      if (this.clients.get(target.key)?.client === client) this.clients.delete(target.key);
    });
    this.clients.set(target.key, { client, lastUsed: Date.now() });
    return client;
  }

  private closeIdle(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const [key, pooled] of this.clients) if (pooled.lastUsed < cutoff) this.drop(key);
  }
}

/**
 * The spec's signal for a pre-2025 server: the POST that starts a Streamable HTTP
 * connection fails with a 4xx (405 or 404 typically). Not 401/403: those are about the
 * credential, and the legacy transport would be refused the same way.
 */
function speaksOnlyLegacy(error: unknown): boolean {
  if (!(error instanceof SdkHttpError)) return false;
  const status = error.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/** The server's own credential, as the transport sends it: `Authorization` from an auth provider, or fixed headers. */
function credentialOptions(
  target: UpstreamTarget,
  tokens: ClientCredentialsTokens,
): { authProvider?: AuthProvider; requestInit?: RequestInit } {
  const auth = target.auth;
  switch (auth.type) {
    case 'none':
      return {};
    case 'bearer':
      return { authProvider: { token: async () => auth.token } };
    case 'headers':
      return { requestInit: { headers: { ...auth.headers } } };
    case 'oauth2_client_credentials':
      return {
        authProvider: {
          token: () => tokens.token(target.key, auth, target.fetch, AbortSignal.timeout(target.timeoutMs)),
          // The token was revoked or expired early: the transport retries once with a new one.
          onUnauthorized: async () => tokens.forget(target.key),
        },
      };
  }
}
