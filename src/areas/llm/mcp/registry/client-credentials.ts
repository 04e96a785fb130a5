// OAuth 2.0 client-credentials tokens for servers whose auth is
// `oauth2_client_credentials` (RFC 6749 §4.4): fetched from the configured token
// endpoint through the guarded fetch, cached in this process until shortly before
// they expire, and forgotten on a 401 so the next request fetches a new one.
import type { Fetch } from './guarded-fetch.js';

export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

// A token is renewed this long before it expires, so no request leaves with one about to lapse.
const EXPIRY_MARGIN_MS = 30_000;
// When the endpoint names no lifetime: short, so a revoked token is not reused for long.
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const MAX_LIFETIME_MS = 24 * 3600_000;

export class ClientCredentialsTokens {
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A valid access token for `key` (the server, and the version of its settings: a
   * changed secret never reuses a token got with the old one). Concurrent callers share one fetch.
   */
  async token(key: string, credentials: ClientCredentials, fetch: Fetch, signal?: AbortSignal): Promise<string> {
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > this.now()) return cached.token;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.request(credentials, fetch, signal)
        .then(({ token, lifetimeMs }) => {
          this.cache.set(key, { token, expiresAt: this.now() + Math.max(0, lifetimeMs - EXPIRY_MARGIN_MS) });
          return token;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  forget(key: string): void {
    this.cache.delete(key);
  }

  private async request(credentials: ClientCredentials, fetch: Fetch, signal?: AbortSignal) {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (credentials.scope) form.set('scope', credentials.scope);
    // client_secret_basic, which every token endpoint must support (RFC 6749 §2.3.1).
    const basic = Buffer.from(`${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`).toString(
      'base64',
    );
    const response = await fetch(credentials.tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      redirect: 'error',
      ...(signal ? { signal } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the token endpoint answered HTTP ${response.status}`);
    let body: { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('the token endpoint answered something other than JSON');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new Error('the token endpoint answered no access_token');
    const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : undefined;
    return { token: body.access_token, lifetimeMs: seconds ? Math.min(seconds * 1000, MAX_LIFETIME_MS) : DEFAULT_LIFETIME_MS };
  }
}
