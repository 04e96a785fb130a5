// The rule for outbound URLs an API caller gives (a node's URL, a model download):
// whose deny list holds them, and the caller's answer when one is refused. The
// mechanism itself (deny lists, the checks at save time and at every connection)
// is url-guard.ts; this file only says which of its scopes applies to whom.
import { validation } from '../../../platform/errors.js';
import { isPlatformAdmin, type Principal } from '../../../platform/identity.js';
import { UrlRefused, type UrlScope } from './url-guard.js';

export interface UrlPolicyDeps {
  /** Checks `url` against the deny list of `scope`; throws UrlRefused (LlmServices.checkUrl). */
  checkUrl(url: string, scope: UrlScope): Promise<URL>;
}

/**
 * An outbound URL a caller gave (a node, a model download), held to the deny list of
 * the caller's scope: a tenant admin's also keeps out private ranges. A refusal is a
 * 400 naming the `url` field.
 */
export async function checkCallerUrl(deps: UrlPolicyDeps, principal: Principal, raw: string): Promise<URL> {
  try {
    return await deps.checkUrl(raw, urlScopeOf(principal));
  } catch (error) {
    if (error instanceof UrlRefused) throw validation('url', error.message);
    throw error;
  }
}

/** Whose deny list holds a URL this caller gives. */
export function urlScopeOf(principal: Principal): UrlScope {
  return isPlatformAdmin(principal) ? 'platform' : 'tenant';
}
