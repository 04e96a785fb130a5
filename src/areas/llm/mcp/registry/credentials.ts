// A server's upstream credential in its three shapes: as given (a request body), as
// stored (every secret encrypted like TOTP secrets, the rest as given), as shown
// (every secret masked). Nothing returns a stored secret in clear but `decryptAuth`,
// which only the upstream connection calls.
import type { Secrets } from '../../../../platform/secrets.js';
import type { McpAuthInput, McpAuthView } from './schemas.js';

/** The row's `auth` column: McpAuthInput with each secret replaced by its ciphertext. */
export type StoredAuth =
  | { type: 'none' }
  | { type: 'bearer'; token: string }
  | { type: 'headers'; headers: Record<string, string> }
  | { type: 'oauth2_client_credentials'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string };

export function encryptAuth(secrets: Pick<Secrets, 'encrypt'>, auth: McpAuthInput): StoredAuth {
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: secrets.encrypt(auth.token) };
    case 'headers':
      return { type: 'headers', headers: mapValues(auth.headers, (value) => secrets.encrypt(value)) };
    case 'oauth2_client_credentials':
      return {
        type: auth.type,
        tokenUrl: auth.tokenUrl,
        clientId: auth.clientId,
        clientSecret: secrets.encrypt(auth.clientSecret),
        ...(auth.scope !== undefined ? { scope: auth.scope } : {}),
      };
  }
}

/** Throws when a secret was encrypted under another master secret (the caller reports it as the server's error). */
export function decryptAuth(secrets: Pick<Secrets, 'decrypt'>, auth: StoredAuth): McpAuthInput {
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: secrets.decrypt(auth.token) };
    case 'headers':
      return { type: 'headers', headers: mapValues(auth.headers, (value) => secrets.decrypt(value)) };
    case 'oauth2_client_credentials':
      return { ...auth, clientSecret: secrets.decrypt(auth.clientSecret) };
  }
}

/**
 * What the API shows. The mask keeps the last four characters of a secret long enough
 * to spare them (so an admin can tell which token is set), and nothing of a short one.
 */
export function maskAuth(secrets: Pick<Secrets, 'decrypt'>, auth: StoredAuth): McpAuthView {
  const mask = (ciphertext: string) => {
    let plain: string;
    try {
      plain = secrets.decrypt(ciphertext);
    } catch {
      return '********';
    }
    return plain.length >= 16 ? `********${plain.slice(-4)}` : '********';
  };
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: mask(auth.token) };
    case 'headers':
      return { type: 'headers', headers: mapValues(auth.headers, mask) };
    case 'oauth2_client_credentials':
      return { ...auth, clientSecret: mask(auth.clientSecret) };
  }
}

function mapValues(record: Record<string, string>, fn: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));
}
