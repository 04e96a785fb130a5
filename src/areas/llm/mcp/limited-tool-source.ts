// toolCallsPerMinute for paths that run tools for a caller without the MCP endpoint in
// front (the Responses API's `mcp` tools): a ToolSource that counts each call against
// the caller's limits first, and refuses one over them before any upstream is reached.
//
// The MCP endpoint does not use it: it checks each `tools/call` itself before the SDK
// server sees the request (endpoint/routes.ts), because only there can a refusal still
// be the HTTP 429 with Retry-After that MCP clients and load balancers understand.
// Wrapping both would count an endpoint call twice.
import type { ToolCallLimiter } from '../rate-limits/tool-calls.js';
import { ToolCallFailed, type ToolSource } from './tool-source.js';

/** What the wrapper throws over the limit: a call refused before any upstream (`denied`), saying when to retry. */
export class ToolCallLimited extends ToolCallFailed {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('denied', message);
    this.name = 'ToolCallLimited';
  }
}

/**
 * `source` with a limited `call`; every other member (list, and whatever the ToolSource
 * grows: prompts, resources) is the source's own, bound to it.
 */
export function limitToolCalls<T extends ToolSource>(source: T, limiter: Pick<ToolCallLimiter, 'admit'>): T {
  const call: ToolSource['call'] = async (principal, tool, args, options) => {
    const decision = await limiter.admit(principal);
    if (!decision.admitted) throw new ToolCallLimited(decision.error.detail, decision.retryAfterSeconds);
    return source.call(principal, tool, args, options);
  };
  return new Proxy(source, {
    get(target, property) {
      if (property === 'call') return call;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
