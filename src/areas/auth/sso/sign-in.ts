// Sign-in through a connection's IdP: authorization code with PKCE (S256), state and
// nonce (openid-client 6).
//
// /start makes a transaction: a random secret goes to the browser as a cookie
// (HttpOnly; Secure; SameSite=Lax, so it comes back on the IdP's top-level redirect;
// Path=/api/auth/sso; at most 10 minutes), and the database keeps its keyed hash with
// the state's hash, the nonce, the PKCE verifier (encrypted) and where to return to.
// /callback spends the transaction in one conditional UPDATE before anything else, so
// it works once, on any replica; a callback at another connection's URL, or with
// another transaction's state, spends it and fails. openid-client then checks the `iss`
// response parameter (RFC 9207), the state, the code's PKCE verifier at the token
// endpoint, and the ID token's iss, aud (and azp with several audiences), exp and nonce.
// One redirect URI per connection, so an IdP's code never reaches another's callback.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { notFound } from '../../../platform/errors.js';
import { isId, newId } from '../../../platform/ids.js';
import type { UserRow } from '../users/repository.js';
import { createChallenge } from '../sessions/challenges.js';
import type { Session } from '../sessions/schemas.js';
import { startSession, type SessionClient } from '../sessions/service.js';
import { connectionUrls } from './connections.js';
import type { SsoDeps } from './deps.js';
import { rolesAfterSignIn, SignInRefused, userForPerson, type IdpPerson } from './linking.js';
import { SHARED_ISSUERS } from './providers.js';
import { connectionRepository, ssoSessionRepository, ssoUserRepository, transactionRepository, type ConnectionRow } from './repository.js';

export const TRANSACTION_COOKIE = 'gateway_sso_transaction';
export const TRANSACTION_COOKIE_PATH = '/api/auth/sso';

/** The connection a sign-in may use: enabled, of an active tenant; 404 for anything else. */
export async function liveConnection(deps: Pick<SsoDeps, 'db'>, connectionId: string): Promise<ConnectionRow | undefined> {
  return isId('ssoConnection', connectionId) ? connectionRepository.getLive(deps.db, connectionId) : undefined;
}

// A backslash, or any control character (tabs and line breaks, which URL parsers drop).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const UNSAFE_IN_PATH = /[\\\u0000-\u001f\u007f]/;

/**
 * `returnTo` as a path on our own origin, or `/`: only a relative path starting with one
 * slash, with no backslash or control character anywhere (browsers read `/\evil` as
 * `//evil`), judged by the URL parser as a browser would resolve it. The fragment is dropped.
 */
export function safeReturnTo(raw: string | undefined): string {
  if (raw === undefined || !raw.startsWith('/') || raw.startsWith('//') || UNSAFE_IN_PATH.test(raw)) return '/';
  const base = 'https://gateway.invalid';
  try {
    const url = new URL(raw, base);
    if (url.origin !== base || url.pathname.startsWith('//')) return '/';
    return url.pathname + url.search;
  } catch {
    return '/';
  }
}

/** GET /api/auth/sso/{connectionId}/start: the IdP's authorization URL and the transaction's cookie value. */
export async function startSignIn(
  deps: Pick<SsoDeps, 'db' | 'secrets' | 'config' | 'auth'>,
  connectionId: string,
  returnTo: string | undefined,
  origin: string,
): Promise<{ location: string; transaction: string; maxAgeSeconds: number }> {
  const connection = await liveConnection(deps, connectionId);
  if (!connection) throw notFound('SSO connection');
  let configuration: client.Configuration;
  try {
    configuration = await deps.auth.sso.clients.configuration(connection);
  } catch (error) {
    throw new SignInRefused('unavailable', `discovery failed: ${(error as Error).message}`);
  }
  const transaction = randomBytes(32).toString('base64url');
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const ttl = deps.config.sso.transactionTtlSeconds;
  await transactionRepository.insert(deps.db, {
    id: deps.secrets.hash('sso-transaction', transaction),
    connection_id: connection.id,
    state_hash: stateHash(deps, state),
    nonce,
    code_verifier: deps.secrets.encrypt(verifier),
    return_to: safeReturnTo(returnTo),
    expires_at: new Date(Date.now() + ttl * 1000),
  });
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: connectionUrls(origin, connection.id).redirectUri,
    scope: connection.scopes.join(' '),
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { location: url.href, transaction, maxAgeSeconds: ttl };
}

export type SignInOutcome =
  | { kind: 'signedIn'; session: Session; returnTo: string }
  | { kind: 'twoFactor'; twoFactorToken: string; returnTo: string };

/** What the IdP's redirect brought: its query (as parsed, and as sent) and the transaction cookie. */
export interface CallbackInput {
  query: { state?: string | undefined; error?: string | undefined };
  /** The query string exactly as the IdP wrote it, for openid-client to read. */
  rawQuery: string;
  transaction: string | undefined;
  client: SessionClient;
}

/** GET /api/auth/sso/callback/{connectionId}: a session (or a TOTP challenge) for the person, or SignInRefused. */
export async function completeSignIn(deps: SsoDeps, connectionId: string, input: CallbackInput, origin: string): Promise<SignInOutcome> {
  if (!input.transaction) throw new SignInRefused('transaction', 'no transaction cookie');
  const transaction = await transactionRepository.consume(deps.db, deps.secrets.hash('sso-transaction', input.transaction));
  if (!transaction) throw new SignInRefused('transaction', 'the transaction is unknown, used or expired');
  if (transaction.connection_id !== connectionId) throw new SignInRefused('transaction', 'the transaction belongs to another connection');
  if (input.query.error !== undefined) throw new SignInRefused('idp', `the IdP refused: ${input.query.error}`);
  if (input.query.state === undefined || !sameHash(stateHash(deps, input.query.state), transaction.state_hash))
    throw new SignInRefused('transaction', 'the state is missing or is not the transaction’s');
  const connection = await liveConnection(deps, connectionId);
  if (!connection) throw new SignInRefused('idp', 'the connection is disabled or gone');

  let configuration: client.Configuration;
  try {
    configuration = await deps.auth.sso.clients.configuration(connection);
  } catch (error) {
    throw new SignInRefused('unavailable', `discovery failed: ${(error as Error).message}`);
  }
  const { redirectUri } = connectionUrls(origin, connection.id);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(configuration, new URL(`${redirectUri}?${input.rawQuery}`), {
      pkceCodeVerifier: deps.secrets.decrypt(transaction.code_verifier),
      expectedState: input.query.state,
      expectedNonce: transaction.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw new SignInRefused('idp', `the code exchange or the ID token failed its checks: ${describe(error)}`);
  }
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) throw new SignInRefused('idp', 'no ID token');
  const person = personOf(connection, claims);
  if (SHARED_ISSUERS.has(connection.issuer.replace(/\/$/, '')) && !connection.allowed_email_domains.includes(String(claims.hd ?? '')))
    throw new SignInRefused('not_linked', 'the account is not of the domains the connection admits (hd claim)');

  let user = await userForPerson(deps, connection, person);
  const roles = rolesAfterSignIn(connection, user, person.groups);
  if (roles) {
    user = (await ssoUserRepository.setRoles(deps.db, user.tenant_id, user.id, roles)) ?? user;
    await deps.bus.publish({ kind: 'user', id: user.id });
  }
  const state = await deps.auth.accounts.get(user.id);
  if (!state?.active || state.tenantId !== connection.tenant_id)
    throw new SignInRefused('account_disabled', 'the user or tenant is disabled');

  const record = {
    id: newId('ssoSession'),
    tenant_id: user.tenant_id,
    user_id: user.id,
    connection_id: connection.id,
    subject: person.subject,
    sid: typeof claims.sid === 'string' ? claims.sid : null,
    id_token: deps.secrets.encrypt(tokens.id_token),
    expires_at: new Date(Date.now() + deps.config.auth.refreshTokenTtlDays * 86_400_000),
  };
  if (needsTotp(connection, user, claims)) {
    const challenge = await createChallenge(deps, user.id);
    await ssoSessionRepository.insert(deps.db, { ...record, family_id: null, challenge_id: challenge.id });
    return { kind: 'twoFactor', twoFactorToken: challenge.token, returnTo: transaction.return_to };
  }
  const { sessionId, ...session } = await startSession(deps, user, input.client);
  await ssoSessionRepository.insert(deps.db, { ...record, family_id: sessionId, challenge_id: null });
  return { kind: 'signedIn', session, returnTo: transaction.return_to };
}

function personOf(connection: ConnectionRow, claims: client.IDToken): IdpPerson {
  const email = typeof claims.email === 'string' && claims.email.includes('@') ? claims.email : undefined;
  const groups = claims[connection.groups_claim];
  const subjectValue = claims[connection.subject_claim];
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email,
    emailVerified: claims.email_verified === true,
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : typeof groups === 'string' ? [groups] : [],
    subjectClaimValue: typeof subjectValue === 'string' ? subjectValue : undefined,
  };
}

// RFC 8176 methods that are a second factor by themselves, or `mfa`; or two methods at once.
const SECOND_FACTORS = new Set(['mfa', 'otp', 'hwk', 'sc', 'sms', 'tel', 'fido', 'swk', 'face', 'fpt', 'iris', 'retina', 'vbm']);

/** Whether the ID token says the IdP asked for a second factor (amr, else acr). */
export function idpShowsMfa(claims: { readonly [claim: string]: unknown }): boolean {
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((m): m is string => typeof m === 'string') : [];
  if (amr.some((method) => SECOND_FACTORS.has(method.toLowerCase())) || new Set(amr).size >= 2) return true;
  return typeof claims.acr === 'string' && /mfa|multi-?factor/i.test(claims.acr);
}

/** A user who enrolled TOTP is asked for it after SSO too, unless the connection trusts the IdP's MFA and the token shows one. */
function needsTotp(connection: ConnectionRow, user: UserRow, claims: client.IDToken): boolean {
  return user.totp_enabled && !(connection.trust_idp_mfa && idpShowsMfa(claims));
}

function stateHash(deps: Pick<SsoDeps, 'secrets'>, state: string): string {
  return deps.secrets.hash('sso-transaction', `state:${state}`);
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** An error's message and code: never its cause, whose response body may hold anything the IdP sent. */
function describe(error: unknown): string {
  const { message, code, error: oauthError } = error as { message?: string; code?: string; error?: string };
  return [oauthError, code, message].filter(Boolean).join(': ');
}
