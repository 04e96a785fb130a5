// Two-factor (TOTP) enrollment, removal, and the second step of login.
//
// Decisions where the spec is silent:
// - verify-2fa takes `code` holding either a 6-digit TOTP code or a recovery code
//   (told apart by shape), or the recovery code in `recoveryCode`; exactly one of the two.
// - A wrong code or password on enable/disable is a 400 naming the field, not a 401:
//   the caller's access token is fine, and 401 tells clients to refresh it.
// - Wrong second factors (verify-2fa, enable, disable) are throttled as passwords are
//   (sessions/service.ts): a hard limit per (account, address)
//   (GATEWAY_2FA_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS) → 429 with Retry-After, and per
//   account across addresses a growing delay from GATEWAY_2FA_ACCOUNT_BACKOFF_AFTER_FAILURES
//   on; so someone holding the password cannot keep the owner out from elsewhere. Each
//   login challenge also dies after GATEWAY_2FA_MAX_ATTEMPTS_PER_CHALLENGE attempts.
import type { Config } from '../../../platform/config.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { AppError, validation } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import type { Secrets } from '../../../platform/secrets.js';
import { verifyPassword } from '../../../platform/passwords.js';
import type { UserRow } from '../users/repository.js';
import { signedInUserRow, toUser, userById } from '../users/service.js';
import type { User } from '../users/schemas.js';
import { consumeChallenge, endChallenges, spendChallengeAttempt } from '../sessions/challenges.js';
import type { Session } from '../sessions/schemas.js';
import type { SessionDeps } from '../sessions/deps.js';
import { startSession } from '../sessions/service.js';
import type { Limit, Throttle } from '../sessions/throttle.js';
import { twoFactorRepository } from './repository.js';
import type { DisableBody, EnableResponse, SetupResponse, VerifyBody } from './schemas.js';
import { newRecoveryCodes, normalizeRecoveryCode } from './recovery-codes.js';
import { isTotpShaped, matchTotpStep, newTotpSecret, otpauthUri } from './totp.js';

/** Sign-in's deps (verify-2fa ends in a session), plus the bus and the TOTP secrets' encryption. */
export interface TwoFactorDeps extends SessionDeps {
  bus: InvalidationBus;
  secrets: Pick<Secrets, 'hash' | 'encrypt' | 'decrypt'>;
  config: SessionDeps['config'] & {
    auth: SessionDeps['config']['auth'] &
      Pick<Config['auth'], 'twoFactorMaxFailuresPerAccountAndAddress' | 'twoFactorAccountBackoffAfterFailures'>;
  };
}

export const twoFactorThrottleKeys = {
  account: (userId: string) => `2fa:acct:${userId}`,
  accountAtAddress: (userId: string, ip: string) => `2fa:acct-ip:${userId}|${ip}`,
};

/** Like login's: a success resets the (account, address) count only. */
function twoFactorLimits(deps: TwoFactorDeps, userId: string, address: string): Limit[] {
  const { auth } = deps.config;
  return [
    { key: twoFactorThrottleKeys.accountAtAddress(userId, address), max: auth.twoFactorMaxFailuresPerAccountAndAddress },
    {
      key: twoFactorThrottleKeys.account(userId),
      backoff: { after: auth.twoFactorAccountBackoffAfterFailures, maxDelaySeconds: auth.accountBackoffMaxSeconds },
    },
  ];
}

const invalidChallenge = () => new AppError('INVALID_TWO_FACTOR', 'The two-factor challenge is invalid, used or expired; sign in again.');
const wrongCode = () => new AppError('INVALID_TWO_FACTOR', 'The two-factor code is incorrect.');
const alreadyEnabled = () => new AppError('CONFLICT', 'Two-factor authentication is already enabled.');
const notEnabled = () => new AppError('CONFLICT', 'Two-factor authentication is not enabled.');

/** Step 1 of enrollment: a new secret, stored encrypted, not yet in force. */
export async function setupTwoFactor(deps: TwoFactorDeps, principal: Principal): Promise<SetupResponse> {
  const user = await signedInUserRow(deps, principal);
  if (user.totp_enabled) throw alreadyEnabled();
  const secret = newTotpSecret();
  if (!(await twoFactorRepository.setPendingSecret(deps.db, user.id, deps.secrets.encrypt(secret)))) throw alreadyEnabled();
  return { secret, otpauthUri: otpauthUri(secret, user.username) };
}

/** Step 2: a valid code proves the app holds the secret; answers the recovery codes, once. */
export async function enableTwoFactor(
  deps: TwoFactorDeps,
  throttle: Throttle,
  principal: Principal,
  code: string,
  address: string,
): Promise<EnableResponse> {
  const user = await signedInUserRow(deps, principal);
  if (user.totp_enabled) throw alreadyEnabled();
  if (!user.totp_secret) throw new AppError('CONFLICT', 'Start with POST /api/auth/2fa/setup to get a secret.');
  const key = twoFactorThrottleKeys.accountAtAddress(user.id, address);
  const attempt = await throttle.begin(twoFactorLimits(deps, user.id, address));
  try {
    if (!(await acceptTotp(deps, user, code))) {
      await attempt.fail();
      throw validation('code', 'is not a valid code from the authenticator app');
    }
    const recoveryCodes = newRecoveryCodes();
    const hashes = recoveryCodes.map((c) => deps.secrets.hash('recovery-code', normalizeRecoveryCode(c)));
    const enabled = await deps.db.tx(async (q) => {
      if (!(await twoFactorRepository.enable(q, user.id))) return false;
      await twoFactorRepository.replaceRecoveryCodes(q, user.id, hashes);
      return true;
    });
    if (!enabled) throw alreadyEnabled();
    await attempt.reset(key);
    await deps.bus.publish({ kind: 'user', id: user.id });
    return { recoveryCodes };
  } finally {
    attempt.end();
  }
}

/** Turns 2FA off after a current code (TOTP or recovery) or the password. */
export async function disableTwoFactor(
  deps: TwoFactorDeps,
  throttle: Throttle,
  principal: Principal,
  proof: DisableBody,
  address: string,
): Promise<User> {
  if ((proof.code === undefined) === (proof.password === undefined)) {
    throw validation('code', 'send either `code` or `password`, not both and not neither');
  }
  const user = await signedInUserRow(deps, principal);
  if (!user.totp_enabled) throw notEnabled();
  const key = twoFactorThrottleKeys.accountAtAddress(user.id, address);
  const attempt = await throttle.begin(twoFactorLimits(deps, user.id, address));
  try {
    const ok =
      proof.password !== undefined
        ? await verifyPassword(proof.password, user.password_hash)
        : await acceptSecondFactor(deps, user, proof.code!);
    if (!ok) {
      await attempt.fail();
      throw proof.password !== undefined ? validation('password', 'is incorrect') : validation('code', 'is not a valid code');
    }
    // One transaction: the secret, the recovery codes and any open login challenge go together.
    await deps.db.tx(async (q) => {
      await twoFactorRepository.disable(q, user.id);
      await endChallenges({ db: q }, user.id);
    });
    await attempt.reset(key);
    await deps.bus.publish({ kind: 'user', id: user.id });
    const updated = await userById(deps, user.id);
    return toUser(updated!);
  } finally {
    attempt.end();
  }
}

/** Second step of login: the challenge from login plus a code gives the full login response. */
export async function verifyTwoFactor(
  deps: TwoFactorDeps,
  throttle: Throttle,
  input: VerifyBody,
  address: string,
  userAgent?: string,
): Promise<Session> {
  if ((input.code === undefined) === (input.recoveryCode === undefined)) {
    throw validation('code', 'send either `code` or `recoveryCode`, not both and not neither');
  }
  const challenge = await spendChallengeAttempt(deps, input.twoFactorToken);
  if (!challenge) throw invalidChallenge();
  const key = twoFactorThrottleKeys.accountAtAddress(challenge.userId, address);
  const attempt = await throttle.begin(twoFactorLimits(deps, challenge.userId, address));
  try {
    const user = await userById(deps, challenge.userId);
    const state = user ? await deps.auth.accounts.get(user.id) : null;
    if (!user || !state?.active || !user.totp_enabled) throw invalidChallenge();
    const ok =
      input.recoveryCode !== undefined
        ? await acceptRecoveryCode(deps, user, input.recoveryCode)
        : await acceptSecondFactor(deps, user, input.code!);
    if (!ok) {
      await attempt.fail();
      throw wrongCode();
    }
    if (!(await consumeChallenge(deps, challenge.id))) throw invalidChallenge();
    await attempt.reset(key);
    const session = await startSession(deps, user, { userAgent, address });
    await deps.auth.ssoHooks.twoFactorCompleted(challenge.id, session.sessionId);
    return session;
  } finally {
    attempt.end();
  }
}

/** A 6-digit code is TOTP; anything else is tried as a recovery code. */
function acceptSecondFactor(deps: TwoFactorDeps, user: UserRow, code: string): Promise<boolean> {
  return isTotpShaped(code) ? acceptTotp(deps, user, code) : acceptRecoveryCode(deps, user, code);
}

// Valid within ±1 step and later than the last accepted step: each code works once.
async function acceptTotp(deps: TwoFactorDeps, user: UserRow, code: string): Promise<boolean> {
  if (!user.totp_secret) return false;
  const step = matchTotpStep(deps.secrets.decrypt(user.totp_secret), code);
  return step !== undefined && (await twoFactorRepository.advanceStep(deps.db, user.id, step));
}

function acceptRecoveryCode(deps: TwoFactorDeps, user: UserRow, code: string): Promise<boolean> {
  return twoFactorRepository.useRecoveryCode(deps.db, user.id, deps.secrets.hash('recovery-code', normalizeRecoveryCode(code)));
}
