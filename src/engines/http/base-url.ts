// Node URLs as operators write them: with or without a trailing slash, and for
// OpenAI-compatible servers with or without the `/v1` suffix (vLLM's docs use
// both). The pool needs the bare origin; requests get the path prefix in front.

export interface NodeAddress {
  /** scheme://host:port, what the connection pool dials. */
  origin: string;
  /** Path in front of every API path ('' or '/something', never a trailing slash). */
  prefix: string;
  /** For messages: origin + prefix, never the userinfo part of the URL. */
  display: string;
  /** `Basic …` when the URL carried user:password (reverse proxies in front of engines). */
  basicAuth?: string;
}

/**
 * Splits a node URL into origin and path prefix, dropping `strip` (e.g. '/v1')
 * when the path ends with it, since the adapter adds its API paths itself.
 */
export function parseNodeUrl(url: string, strip?: string): NodeAddress {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`engine node URL must be http or https: ${parsed.protocol}`);
  let prefix = parsed.pathname.replace(/\/+$/, '');
  if (strip && prefix.endsWith(strip)) prefix = prefix.slice(0, -strip.length).replace(/\/+$/, '');
  const basicAuth =
    parsed.username || parsed.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`
      : undefined;
  return { origin: parsed.origin, prefix, display: parsed.origin + prefix, ...(basicAuth ? { basicAuth } : {}) };
}
