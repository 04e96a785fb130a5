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
  };
  auth: { accessTokens: Pick<AccessTokens, 'issue'>; accounts: Pick<AccountStates, 'get'> };
}
