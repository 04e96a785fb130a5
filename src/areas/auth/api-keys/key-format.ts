// API key format: `rdk_` + 32 random bytes + a 4-byte checksum, base64url.
// The checksum lets the edge reject typos and junk without touching the database;
// clients may rely on nothing but the `rdk_` prefix.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'rdk_';
const RANDOM_BYTES = 32;
const CHECKSUM_BYTES = 4;
const ENCODED_LENGTH = Math.ceil(((RANDOM_BYTES + CHECKSUM_BYTES) * 4) / 3);

export function generateApiKey(): string {
  const random = randomBytes(RANDOM_BYTES);
  return KEY_PREFIX + Buffer.concat([random, checksum(random)]).toString('base64url');
}

export function isWellFormedApiKey(key: string): boolean {
  if (!key.startsWith(KEY_PREFIX) || key.length !== KEY_PREFIX.length + ENCODED_LENGTH) return false;
  const body = key.slice(KEY_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) return false;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== RANDOM_BYTES + CHECKSUM_BYTES) return false;
  return checksum(bytes.subarray(0, RANDOM_BYTES)).equals(bytes.subarray(RANDOM_BYTES));
}

/** Start and end visible, middle elided: `rdk_AbCd…wxYz`. */
export function maskApiKey(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…${key.slice(-4)}`;
}

function checksum(random: Buffer): Buffer {
  return createHash('sha256').update(random).digest().subarray(0, CHECKSUM_BYTES);
}
