// What sign-in needs from the composition root: AppContext satisfies it, and so
// does anything that provides these few parts (tests, a split deployment).
import type { Config } from '../../../platform/config.js';
import type { Database } from '../../../platform/db/database.js';
import type { FailureCounter } from '../../../platform/coordination/failure-counter.js';
import type { Secrets } from '../../../platform/secrets.js';
import type { AccountStates } from '../users/account-state.js';
import type { AccessTokens } from './access-tokens.js';

export interface SessionDeps {
  db: Database;
  secrets: Pick<Secrets, 'hash'>;
  /** Failed sign-in attempts, counted per (account, address), per address and per account (throttle.ts). */
  failures: FailureCounter;
  config: {
    auth: Pick<
      Config['auth'],
      | 'refreshTokenTtlDays'
      | 'refreshReuseGraceSeconds'
      | 'loginMaxFailuresPerAccountAndAddress'
      | 'loginMaxFailuresPerAddress'
      | 'loginAccountBackoffAfterFailures'
      | 'accountBackoffMaxSeconds'
      | 'twoFactorMaxAttemptsPerChallenge'
    >;
    /** Browser origins allowed besides the gateway's own (GATEWAY_CORS_ORIGINS): they may use the refresh cookie. */
    corsOrigins: readonly string[];
    /** GATEWAY_PUBLIC_URL (origin.ts). */
    sso: Pick<Config['sso'], 'publicUrl'>;
  };
  auth: { accessTokens: Pick<AccessTokens, 'issue'>; accounts: Pick<AccountStates, 'get'>; ssoHooks: SsoHooks };
}

/**
 * What single sign-on adds to password sign-in and sign-out (areas/auth/sso/hooks.ts),
 * handed in by the composition root: sso builds on sessions, so sessions cannot import it.
 */
export interface SsoHooks {
  /** Whether a password sign-in of `user` is refused by an ssoOnly connection of its tenant (members; admins without TOTP). */
  passwordSignInRefused(user: { tenantId: string; roles: readonly string[]; totpEnabled: boolean }): Promise<boolean>;
  /** The IdP's end-session URL for a session an SSO sign-in started (undefined for others); forgets the session's SSO record. */
  endSessionUrl(sessionId: string, origin: string): Promise<string | undefined>;
  /** A sign-in that waited under a two-factor challenge has its session now (an SSO one keeps its record under the challenge until then). */
  twoFactorCompleted(challengeId: string, sessionId: string): Promise<void>;
}
