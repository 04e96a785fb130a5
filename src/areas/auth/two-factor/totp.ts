// TOTP (RFC 6238) with the parameters every authenticator app assumes:
// HMAC-SHA1, 6 digits, 30-second steps. Codes are accepted one step either side
// of now (clock drift), and the caller records the matched step so a code works once.
import { Secret, TOTP } from 'otpauth';

export const ISSUER = 'Gateway';
const PERIOD_SECONDS = 30;
const DIGITS = 6;
const WINDOW_STEPS = 1;

function totp(secretBase32: string, label = 'user'): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new random secret (160 bits, the RFC 4226 recommendation), base32 as apps expect it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI an authenticator app scans. */
export function otpauthUri(secretBase32: string, username: string): string {
  return totp(secretBase32, username).toString();
}

export function totpCode(secretBase32: string, timestampMs = Date.now()): string {
  return totp(secretBase32).generate({ timestamp: timestampMs });
}

export const isTotpShaped = (code: string) => /^\d{6}$/.test(code);

/** The time step `code` belongs to, if it is valid within ±1 step of `timestampMs`. */
export function matchTotpStep(secretBase32: string, code: string, timestampMs = Date.now()): number | undefined {
  if (!isTotpShaped(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp: timestampMs, window: WINDOW_STEPS });
  if (delta === null) return undefined;
  return Math.floor(timestampMs / 1000 / PERIOD_SECONDS) + delta;
}
