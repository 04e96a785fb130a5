// SCIM token format: `scim_` + 32 random bytes + a 4-byte checksum, base64url
// (platform/token-format.ts), as an API key's but a prefix of its own: the edge never
// mistakes one for the other.
import { tokenFormat } from '../../../platform/token-format.js';

const format = tokenFormat('scim_');
export const SCIM_TOKEN_PREFIX = format.prefix;
export const generateScimToken = format.generate;
export const isWellFormedScimToken = format.isWellFormed;
export const maskScimToken = format.mask;
