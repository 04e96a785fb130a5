// The signed-in session. The access token lives only in this module's memory (never in
// storage); a reload gets a new one from the refresh cookie. Refresh tokens rotate and a
// reused one ends the whole family, so two tabs must never refresh at once: refreshes
// are serialised across tabs with a Web Lock, and a tab that refreshed shares the new
// access token (and a sign-out) with the others over a BroadcastChannel.
import type { Static } from '@fastify/type-provider-typebox';
import type { LogoutResponse, Session, TwoFactorRequired } from '../../../src/areas/auth/sessions/schemas.js';
import { problemOf } from './problem.js';

export type User = Session['user'];
type LogoutAnswer = Static<typeof LogoutResponse>;
export type SessionState =
  | { status: 'loading' }
  | { status: 'signedOut'; reason?: 'signedOut' | 'expired' }
  | { status: 'signedIn'; user: User };

interface Token {
  value: string;
  expiresAt: number;
  /** A counter, not a clock: tells a waiting tab that a newer token arrived meanwhile. */
  generation: number;
}

type Message = { type: 'session'; token: string; expiresAt: string; user: User } | { type: 'signedOut' };

const REFRESH_AHEAD_MS = 60_000;
const LOCK_NAME = 'gateway-console-refresh';
const JSON_HEADERS = { 'content-type': 'application/json' };

let state: SessionState = { status: 'loading' };
let token: Token | null = null;
let generation = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let inflight: Promise<boolean> | null = null;
const listeners = new Set<(state: SessionState) => void>();
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('gateway-console-session') : null;

channel?.addEventListener('message', (event: MessageEvent<Message>) => {
  if (event.data.type === 'session') adopt(event.data.token, event.data.expiresAt, event.data.user, false);
  else forget(false, 'signedOut');
});

export const sessionState = (): SessionState => state;

export function onSessionChange(listener: (state: SessionState) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setState(next: SessionState): void {
  state = next;
  for (const listener of listeners) listener(next);
}

function adopt(value: string, expiresAt: string, user: User, announce: boolean): void {
  generation += 1;
  token = { value, expiresAt: Date.parse(expiresAt), generation };
  clearTimeout(timer);
  timer = setTimeout(() => void refresh(), Math.max(5_000, token.expiresAt - Date.now() - REFRESH_AHEAD_MS));
  setState({ status: 'signedIn', user });
  if (announce) channel?.postMessage({ type: 'session', token: value, expiresAt, user } satisfies Message);
}

function forget(announce: boolean, reason: 'signedOut' | 'expired'): void {
  token = null;
  clearTimeout(timer);
  setState({ status: 'signedOut', reason });
  if (announce) channel?.postMessage({ type: 'signedOut' } satisfies Message);
}

/** The bearer for the next request, or null when signed out. */
export const accessToken = (): string | null => token?.value ?? null;

function withLock<T>(work: () => Promise<T>): Promise<T> {
  return navigator.locks ? (navigator.locks.request(LOCK_NAME, work) as Promise<T>) : work();
}

/**
 * A new access token from the refresh cookie. Concurrent callers share one attempt;
 * a tab that waited for the lock while another tab refreshed takes that tab's token.
 */
export function refresh(): Promise<boolean> {
  const seen = token?.generation ?? 0;
  inflight ??= withLock(async () => {
    if (token && token.generation !== seen && token.expiresAt - Date.now() > REFRESH_AHEAD_MS) return true;
    const response = await fetch('/api/auth/refresh', { method: 'POST', headers: JSON_HEADERS, body: '{}' });
    if (!response.ok) {
      forget(false, state.status === 'signedIn' ? 'expired' : 'signedOut');
      return false;
    }
    const session = (await response.json()) as Session;
    adopt(session.token, session.expiresAt, session.user, true);
    return true;
  }).finally(() => {
    inflight = null;
  });
  return inflight;
}

export type SignInResult = { done: true } | { done: false; challenge: TwoFactorRequired };

export async function signIn(username: string, password: string): Promise<SignInResult> {
  const response = await fetch('/api/auth/login', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ username, password }) });
  if (!response.ok) throw await problemOf(response);
  const body = (await response.json()) as Partial<Session> & Partial<TwoFactorRequired>;
  if (body.token && body.expiresAt && body.user) {
    adopt(body.token, body.expiresAt, body.user, true);
    return { done: true };
  }
  return { done: false, challenge: body as TwoFactorRequired };
}

/** The second step: a TOTP code, or a recovery code. */
export async function verifyTwoFactor(twoFactorToken: string, entry: { code: string } | { recoveryCode: string }): Promise<void> {
  const response = await fetch('/api/auth/verify-2fa', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ twoFactorToken, ...entry }),
  });
  if (!response.ok) throw await problemOf(response);
  const session = (await response.json()) as Session;
  adopt(session.token, session.expiresAt, session.user, true);
}

/**
 * Ends the session on the server (the refresh family) and in every open tab. A session
 * a single sign-on started answers 200 {endSessionUrl}: this tab then goes on to the
 * IdP, which signs the user out there too and sends them back to the console.
 */
export async function signOut(): Promise<void> {
  const response = await withLock(() => fetch('/api/auth/logout', { method: 'POST', headers: JSON_HEADERS, body: '{}' })).catch(
    () => undefined,
  );
  forget(true, 'signedOut');
  const endSessionUrl = response?.status === 200 ? await endSessionOf(response) : undefined;
  if (endSessionUrl) location.assign(endSessionUrl);
}

async function endSessionOf(response: Response): Promise<string | undefined> {
  try {
    const { endSessionUrl } = (await response.json()) as Partial<LogoutAnswer>;
    const url = new URL(String(endSessionUrl));
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Starts signed out without asking the refresh cookie (a single sign-on that still needs the TOTP code). */
export function startSignedOut(): void {
  if (state.status === 'loading') setState({ status: 'signedOut' });
}

/** The user record changed (2FA enabled, e-mail edited): show the new one. */
export function updateUser(user: User): void {
  if (state.status === 'signedIn') setState({ status: 'signedIn', user });
}
