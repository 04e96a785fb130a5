// Typed, prefixed, time-sortable ids: `<prefix>_<10 chars of ms time><16 random chars>`
// in Crockford base32 (ULID layout), so ids sort by creation and name their kind.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const ID_PREFIXES = {
  tenant: 'ten',
  user: 'usr',
  apiKey: 'key',
  workspace: 'ws',
  collection: 'col',
  document: 'doc',
  chunk: 'chk',
  conversation: 'conv',
  thread: 'thread',
  message: 'msg',
  run: 'run',
  assistant: 'asst',
  refreshToken: 'rt',
  tokenFamily: 'fam',
  challenge: 'chl',
  computeNode: 'node',
  mcpServer: 'mcps',
  mcpCall: 'mcpc',
  ssoConnection: 'sso',
  ssoSession: 'ssos',
  response: 'resp',
  scimToken: 'scimt',
  scimGroup: 'grp',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind, now = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  let random = '';
  for (const byte of randomBytes(16)) random += ALPHABET[byte & 31];
  return `${ID_PREFIXES[kind]}_${time}${random}`;
}

/** True when `value` is shaped like an id of `kind`; lets routes answer 404 without a query. */
export function isId(kind: IdKind, value: string): boolean {
  return (
    value.length === ID_PREFIXES[kind].length + 27 &&
    value.startsWith(`${ID_PREFIXES[kind]}_`) &&
    /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(-26))
  );
}
