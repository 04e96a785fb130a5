// The only way the registry reaches an MCP server or its token endpoint: a fetch held
// to the node deny lists (outbound/url-guard.ts) at every step. Each URL, redirect
// targets included, is checked before it is requested (an address literal never goes
// through name resolution, so the connect-time lookup alone would miss it), and every
// connection resolves its host through the guarded lookup, so a name re-pointed after
// the check (DNS rebinding) reaches nothing either.
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import type { OutboundGuard } from '../../../../engines/types.js';
import { UrlRefused } from '../../outbound/url-guard.js';

/** The fetch the MCP SDK's transports take (its FetchLike). */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const MAX_REDIRECTS = 5;
const CONNECT_TIMEOUT_MS = 10_000;

/** An agent whose connections resolve names through the guard; close it with the registry. */
export function guardedAgent(guard: OutboundGuard): Agent {
  // No headers or body timeout of its own: a tool call may take up to its server's
  // timeoutSeconds before answering, and SSE streams stay open; the SDK's request
  // timeout and the caller's signal end them.
  return new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS, lookup: guard.lookup }, headersTimeout: 0, bodyTimeout: 0 });
}

/**
 * A fetch through `agent` that checks every URL with `guard` first. A redirect to a
 * refused address fails the request whatever `redirect` asks; `manual` (what the SDK
 * sends) returns any other redirect as is; `follow` follows only within the origin,
 * so the server's credential never travels to another host.
 */
export function guardedFetch(guard: OutboundGuard, agent: Dispatcher): Fetch {
  return async (input, init = {}) => {
    let url = new URL(input);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    for (let hop = 0; ; hop++) {
      await guard.checkUrl(url);
      const response = (await undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        method,
        body: body as never,
        redirect: 'manual',
        dispatcher: agent,
      })) as unknown as Response;
      const location = isRedirect(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      const target = new URL(location, url);
      try {
        await guard.checkUrl(target);
      } catch (error) {
        await response.body?.cancel().catch(() => {});
        if (error instanceof UrlRefused) throw new UrlRefused(`redirected to a refused address: ${error.message}`);
        throw error;
      }
      if (init.redirect === 'manual') return response;
      if (init.redirect === 'error' || target.origin !== url.origin || hop >= MAX_REDIRECTS) {
        await response.body?.cancel().catch(() => {});
        throw new UrlRefused(`redirected to ${target.origin}${target.pathname}, which is not followed`);
      }
      await response.body?.cancel().catch(() => {});
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      url = target;
    }
  };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}
