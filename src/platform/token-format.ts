// The shape of the bearer secrets the platform mints (API keys, SCIM tokens): a prefix
// of their own + 32 random bytes + a 4-byte checksum, base64url. The prefix tells the
// edge (and a secret scanner, or someone reading a log search) what a token is; the
// checksum lets typos and junk be refused without a database read.
import { createHash, randomBytes } from 'node:crypto';

const RANDOM_BYTES = 32;
const CHECKSUM_BYTES = 4;
const ENCODED_LENGTH = Math.ceil(((RANDOM_BYTES + CHECKSUM_BYTES) * 4) / 3);

export interface TokenFormat {
  prefix: string;
  generate(): string;
  isWellFormed(token: string): boolean;
  /** Start and end visible, middle elided: `rdk_AbCd…wxYz`. */
  mask(token: string): string;
}

export function tokenFormat(prefix: string): TokenFormat {
  return {
    prefix,
    generate() {
      const random = randomBytes(RANDOM_BYTES);
      return prefix + Buffer.concat([random, checksum(random)]).toString('base64url');
    },
    isWellFormed(token) {
      if (!token.startsWith(prefix) || token.length !== prefix.length + ENCODED_LENGTH) return false;
      const body = token.slice(prefix.length);
      if (!/^[A-Za-z0-9_-]+$/.test(body)) return false;
      const bytes = Buffer.from(body, 'base64url');
      if (bytes.length !== RANDOM_BYTES + CHECKSUM_BYTES) return false;
      return checksum(bytes.subarray(0, RANDOM_BYTES)).equals(bytes.subarray(RANDOM_BYTES));
    },
    mask: (token) => `${token.slice(0, prefix.length + 4)}…${token.slice(-4)}`,
  };
}

function checksum(random: Buffer): Buffer {
  return createHash('sha256').update(random).digest().subarray(0, CHECKSUM_BYTES);
}
