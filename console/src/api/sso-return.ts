// What a single sign-on brings back to the console, read once at start and then wiped
// from the address bar (so a reload, a bookmark or a shared link never carries it):
// the gateway lands on `returnTo#twoFactorToken=…` when the user's TOTP code is still
// needed, or on `/#ssoError=<reason>` when the sign-in was refused. A successful sign-in
// brings nothing: its refresh cookie is read as on any load.
//
// A tenant link, `<any console path>?sso=<connectionId>`, starts that connection's
// sign-in directly (the path, without the parameter, is where the user lands after).
import type { DiscoverResponse } from '../../../src/areas/auth/sso/schemas.js';

/** The refusals the gateway's callback names (src/areas/auth/sso/linking.ts). */
export const SSO_ERRORS = ['transaction', 'idp', 'unavailable', 'not_linked', 'account_disabled', 'too_many_attempts'] as const;
export type SsoError = (typeof SSO_ERRORS)[number] | 'unknown';

export interface SsoReturn {
  twoFactorToken?: string;
  error?: SsoError;
  /** The connection of a tenant link (`?sso=sso_…`). */
  connectionId?: string;
}

export type DiscoveredConnection = DiscoverResponse['connections'][number];

const CONNECTION_ID = /^sso_[A-Za-z0-9_-]{1,100}$/;
let pending: SsoReturn | null = null;

/** Reads the fragment and the tenant link's parameter once, and removes both from the address bar. */
export function takeSsoReturn(): SsoReturn {
  if (pending) return pending;
  const found: SsoReturn = {};
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('twoFactorToken');
  const error = fragment.get('ssoError');
  if (token) found.twoFactorToken = token;
  else if (error !== null) found.error = (SSO_ERRORS as readonly string[]).includes(error) ? (error as SsoError) : 'unknown';
  const query = new URLSearchParams(location.search);
  const sso = query.get('sso');
  if (sso !== null) {
    if (CONNECTION_ID.test(sso)) found.connectionId = sso;
    query.delete('sso');
  }
  if (token || error !== null || sso !== null) {
    const search = query.toString();
    history.replaceState(history.state, '', `${location.pathname}${search ? `?${search}` : ''}`);
  }
  pending = found;
  return found;
}

/** Forgets what was read (a second sign-in in the same page starts clean). */
export function clearSsoReturn(): void {
  pending = {};
}

/** Where the user wanted to go: the current path, never the sign-in page's own. */
export function currentReturnTo(): string {
  const path = location.pathname === '/signin' || location.pathname === '/sign-in' ? '/' : location.pathname;
  return path + location.search;
}

/** A connection's start URL with the page to come back to. */
export function startUrlFor(startUrl: string, returnTo: string = currentReturnTo()): string {
  const url = new URL(startUrl, location.origin);
  url.searchParams.set('returnTo', returnTo);
  return url.href;
}

/** The start URL of a tenant link's connection (the gateway answers a redirect to the IdP, or a 404). */
export const startUrlOf = (connectionId: string) => `/api/auth/sso/${encodeURIComponent(connectionId)}/start`;
