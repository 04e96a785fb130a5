// SCIM token format: `scim_` + 32 random bytes + a 4-byte checksum, base64url. Like an
// API key's (api-keys/key-format.ts), but a prefix of its own: the edge never mistakes
// one for the other, and a token pasted into a log search or a secret scanner says
// what it is. The checksum lets junk be refused without a database read.
import { createHash, randomBytes } from 'node:crypto';

export const SCIM_TOKEN_PREFIX = 'scim_';
const RANDOM_BYTES = 32;
const CHECKSUM_BYTES = 4;
const ENCODED_LENGTH = Math.ceil(((RANDOM_BYTES + CHECKSUM_BYTES) * 4) / 3);

export function generateScimToken(): string {
  const random = randomBytes(RANDOM_BYTES);
  return SCIM_TOKEN_PREFIX + Buffer.concat([random, checksum(random)]).toString('base64url');
}

export function isWellFormedScimToken(token: string): boolean {
  if (!token.startsWith(SCIM_TOKEN_PREFIX) || token.length !== SCIM_TOKEN_PREFIX.length + ENCODED_LENGTH) return false;
  const body = token.slice(SCIM_TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) return false;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== RANDOM_BYTES + CHECKSUM_BYTES) return false;
  return checksum(bytes.subarray(0, RANDOM_BYTES)).equals(bytes.subarray(RANDOM_BYTES));
}

/** Start and end visible, middle elided: `scim_AbCd…wxYz`. */
export function maskScimToken(token: string): string {
  return `${token.slice(0, SCIM_TOKEN_PREFIX.length + 4)}…${token.slice(-4)}`;
}

function checksum(random: Buffer): Buffer {
  return createHash('sha256').update(random).digest().subarray(0, CHECKSUM_BYTES);
}
