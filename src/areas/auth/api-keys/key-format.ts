// API key format: `rdk_` + 32 random bytes + a 4-byte checksum, base64url
// (platform/token-format.ts). Clients may rely on nothing but the `rdk_` prefix.
import { tokenFormat } from '../../../platform/token-format.js';

const format = tokenFormat('rdk_');
export const KEY_PREFIX = format.prefix;
export const generateApiKey = format.generate;
export const isWellFormedApiKey = format.isWellFormed;
export const maskApiKey = format.mask;
