// The gateway as an OpenID relying party of each connection's IdP (openid-client 6).
// A connection's issuer is a URL a tenant admin gave, fetched by this server: it is
// held to the node deny lists (GATEWAY_NODE_DENY_CIDRS, and for a tenant admin's also
// GATEWAY_TENANT_NODE_DENY_CIDRS) when it is saved, and every request to the IdP
// (discovery, token endpoint, keys) goes through the guarded fetch the composition
// root hands in, which checks each URL and resolves every connection's host through
// the deny list again. Issuer metadata is cached per connection (and its last change)
// for 15 minutes; a failed discovery is not cached.
import * as client from 'openid-client';
import { createRemoteJWKSet, customFetch as joseCustomFetch, type JWTVerifyGetKey } from 'jose';
import { validation } from '../../../platform/errors.js';
import { TtlCache } from '../../../platform/ttl-cache.js';
import type { ConnectionRow } from './repository.js';

export type UrlScope = 'platform' | 'tenant';
/** A fetch (the Fetch API's shape) to the IdP. */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What the composition root hands in: the llm area's outbound URL guard, by scope. */
export interface OutboundAccess {
  /** Checks a URL against the scope's deny list; throws (the message fit for the caller) when refused. */
  checkUrl(url: string, scope: UrlScope): Promise<URL>;
  /** A fetch held to the scope's deny list at every request and connection. */
  fetch(scope: UrlScope): Fetch;
}

const CACHE_TTL_MS = 15 * 60_000;
const REQUEST_TIMEOUT_SECONDS = 10;

// Microsoft's multi-tenant endpoints: any Entra ID tenant's users could sign in through them.
const MICROSOFT_HOSTS = new Set([
  'login.microsoftonline.com',
  'login.microsoftonline.us',
  'login.partner.microsoftonline.cn',
  'login.chinacloudapi.cn',
  'login.windows.net',
  'sts.windows.net',
]);
const MULTI_TENANT_SEGMENTS = new Set(['common', 'organizations', 'consumers', '{tenantid}', '%7btenantid%7d']);
/** Issuers every customer of the provider shares: they need allowedEmailDomains, and the `hd` claim is checked against it. */
export const SHARED_ISSUERS = new Set(['https://accounts.google.com']);

/**
 * The issuer as stored: an https URL with no credentials, query or fragment, and never a
 * multi-tenant one (Entra ID's `common`, `organizations`, `consumers`). Kept exactly as
 * given (trailing slash included): discovery compares it with the IdP's own, byte by byte.
 */
export async function checkIssuer(outbound: OutboundAccess, raw: string, scope: UrlScope): Promise<string> {
  const issuer = raw.trim();
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw validation('issuer', 'must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:') throw validation('issuer', 'must use https://');
  if (url.username || url.password) throw validation('issuer', 'must not carry credentials');
  if (url.search || url.hash || issuer.includes('?') || issuer.includes('#'))
    throw validation('issuer', 'must not have a query or a fragment');
  const first = url.pathname.split('/')[1]?.toLowerCase() ?? '';
  if (MICROSOFT_HOSTS.has(url.hostname.toLowerCase()) && MULTI_TENANT_SEGMENTS.has(first))
    throw validation(
      'issuer',
      `must be your directory's own issuer (https://login.microsoftonline.com/<tenant id>/v2.0), not the multi-tenant "${first}" one`,
    );
  try {
    await outbound.checkUrl(issuer, scope);
  } catch (error) {
    throw validation('issuer', (error as Error).message);
  }
  return issuer;
}

export class IdpClients {
  private readonly configurations = new TtlCache<string, Promise<client.Configuration>>(10_000);
  private readonly keySets = new TtlCache<string, JWTVerifyGetKey>(10_000);

  constructor(
    private readonly outbound: OutboundAccess,
    private readonly decrypt: (ciphertext: string) => string,
  ) {}

  /** The connection's client configuration (the IdP's metadata read by discovery, the client's credentials). */
  configuration(row: ConnectionRow): Promise<client.Configuration> {
    const key = `${row.id}@${row.updated_at.getTime()}`;
    const cached = this.configurations.get(key);
    if (cached) return cached;
    const auth = row.token_auth_method === 'client_secret_post' ? client.ClientSecretPost : client.ClientSecretBasic;
    const secret = this.decrypt(row.client_secret);
    const found = client
      .discovery(new URL(row.issuer), row.client_id, { client_secret: secret }, auth(secret), {
        [client.customFetch]: this.outbound.fetch(row.url_scope) as client.CustomFetch,
        timeout: REQUEST_TIMEOUT_SECONDS,
      })
      .then((configuration) => {
        configuration.timeout = REQUEST_TIMEOUT_SECONDS;
        return configuration;
      });
    this.configurations.set(key, found, CACHE_TTL_MS);
    found.catch(() => this.configurations.delete(key));
    return found;
  }

  /** The IdP's signing keys (its jwks_uri), for tokens the gateway verifies itself: back-channel logout tokens. */
  async keys(row: ConnectionRow): Promise<JWTVerifyGetKey> {
    const metadata = (await this.configuration(row)).serverMetadata();
    if (!metadata.jwks_uri) throw new Error('the IdP publishes no jwks_uri');
    const key = `${row.id}@${row.updated_at.getTime()}`;
    let keys = this.keySets.get(key);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(metadata.jwks_uri), {
        [joseCustomFetch]: this.outbound.fetch(row.url_scope) as never,
        timeoutDuration: REQUEST_TIMEOUT_SECONDS * 1000,
      });
      this.keySets.set(key, keys, CACHE_TTL_MS);
    }
    return keys;
  }
}
