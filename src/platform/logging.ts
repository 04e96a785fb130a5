// Logger options shared by the server and the CLI. Secrets never reach logs:
// credentials and cookies are redacted, and request bodies (prompts, passwords,
// document text) are never logged at all.
import type { LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  // At the top of a line's object and one level down (an error's own fields).
  'password',
  'token',
  'refreshToken',
  'key',
  'apiKey',
  'secret',
  '*.password',
  '*.token',
  '*.refreshToken',
  '*.key',
  '*.apiKey',
  '*.secret',
];

/** `redacted: false` only for lines whose fixed shape cannot hold a secret (the access log). */
export function loggerOptions(level: string, redacted = true): LoggerOptions {
  return {
    level,
    ...(redacted ? { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } } : {}),
    // Only method, path and client address: never headers (credentials, cookies) or bodies.
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: stripQuery(req.url), ip: req.ip }),
    },
  };
}

// Query strings can carry anything a client chose to put there; keep paths only.
export function stripQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
