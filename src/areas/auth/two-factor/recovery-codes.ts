// One-time recovery codes, shown once at enrollment and stored only as keyed
// hashes. 10 characters of base32 (50 bits) each: far beyond what the per-challenge
// and per-account attempt limits let anyone guess, short enough to type.
import { randomBytes } from 'node:crypto';

// Crockford's base32: 32 symbols, so each byte's low 5 bits map without bias; no i, l, o, u.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const RECOVERY_CODE_COUNT = 10;

export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let chars = '';
    for (const byte of randomBytes(10)) chars += ALPHABET[byte & 31];
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** Users type codes with or without the dash, in any case, and confuse o/0 and i/l/1. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
}
