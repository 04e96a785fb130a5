// Every server-side key derives from one master secret (HKDF with a purpose label):
// API-key and token hashing, TOTP encryption, internal tokens, and the Ed25519
// JWT signing key. The master comes from GATEWAY_SECRET, or is generated on first
// start and kept in the database, so every replica that shares the database agrees.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

export interface Secrets {
  /** Keyed hash for API keys, SCIM tokens, refresh tokens, 2FA challenges, recovery codes and SSO transactions. */
  hash(
    purpose:
      | 'api-key'
      | 'scim-token'
      | 'refresh-token'
      | 'challenge'
      | 'recovery-code'
      | 'coordination'
      | 'sso-transaction'
      | 'sso-logout-token',
    value: string,
  ): string;
  /** AES-256-GCM: TOTP secrets, node and MCP credentials, SSO client secrets, PKCE verifiers and ID tokens. */
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
  internalTokenKey: Buffer;
  jwt: { privateKey: KeyObject; publicKey: KeyObject; kid: string };
}

// PKCS#8 DER header for a raw 32-byte Ed25519 seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function deriveSecrets(master: string): Secrets {
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', master, 'gateway', label, 32));
  const hashKeys = new Map<string, Buffer>();
  const encryptionKey = derive('totp-aes-256-gcm');
  const seed = derive('jwt-ed25519');
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const kid = createHmac('sha256', 'kid')
    .update(publicKey.export({ format: 'der', type: 'spki' }))
    .digest('base64url')
    .slice(0, 16);

  return {
    hash(purpose, value) {
      let key = hashKeys.get(purpose);
      if (!key) {
        key = derive(`hash:${purpose}`);
        hashKeys.set(purpose, key);
      }
      return createHmac('sha256', key).update(value).digest('base64url');
    },
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    decrypt(ciphertext) {
      const [version, iv, body, tag] = ciphertext.split('.');
      if (version !== 'v1' || !iv || !body || !tag) throw new Error('Unrecognised ciphertext format');
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
    internalTokenKey: derive('internal-token'),
    jwt: { privateKey, publicKey, kid },
  };
}

export function generateMasterSecret(): string {
  return randomBytes(32).toString('base64url');
}
