// The MCP server one request is answered by: a fresh low-level SDK `Server` per HTTP
// request, built for one caller, so nothing of one tenant or key can reach another's
// answer (CVE-2026-25536 was a shared instance). The low-level Server, not McpServer:
// an unknown or ungranted tool must be a JSON-RPC error (-32602), which McpServer
// would answer as an `isError` result.
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import type { Principal } from '../../../../platform/identity.js';
import { AppError } from '../../../../platform/errors.js';
import { ToolCallFailed, type ToolSource } from '../tool-source.js';
import { exposeTools } from './tool-names.js';
import { addContentHandlers } from './content-handlers.js';
import type { RunningCalls } from './running-calls.js';
import { failedCallStatus, recordCall, type McpCallAudit } from '../calls/audit.js';
import type { McpCallStatus } from '../calls/schemas.js';

const SERVER_INFO = { name: 'gateway-mcp', version: '1.0.0' };
/** How long a 2026-07-28 client may reuse a tool list (`ttlMs`); `private`: it is this caller's grants. */
const LIST_CACHE_TTL_MS = 60_000;

/** Who a request is answered for, and which of their tools. */
export interface ToolCaller {
  principal: Principal;
  /** A hash of the credential the request carried: calls are cancelled per (credential, request id). */
  credential: string;
  /** One server's slug (its tools under their own names), or undefined: every server's, prefixed. */
  server: string | undefined;
}

export interface ToolServerDeps {
  tools: ToolSource;
  running: RunningCalls;
  /** Every tools/call ends in one record (calls/audit.ts); a failed write is logged, the answer unchanged. */
  audit: McpCallAudit;
  logError?: (error: Error) => void;
}

export function toolServerFor(deps: ToolServerDeps, caller: ToolCaller): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    cacheHints: {
      'tools/list': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'private' },
      'server/discover': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'private' },
      'prompts/list': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'private' },
      'resources/list': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'private' },
      'resources/templates/list': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'private' },
    },
  });
  // prompts/* and resources/* (content-handlers.ts), through the same ToolSource and grants.
  addContentHandlers(server, deps.tools, caller);
  const exposed = async () =>
    exposeTools(await guarded(() => deps.tools.list(caller.principal, caller.server)), caller.server === undefined);

  server.setRequestHandler('tools/list', async () => {
    const tools = [...(await exposed())].map(([name, tool]) => ({ ...tool.definition, name }));
    return { tools };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    const startedAt = new Date();
    const started = performance.now();
    const audit = (server: string | null, tool: string, status: McpCallStatus, result?: unknown) =>
      recordCall(
        deps.audit,
        { principal: caller.principal, server, tool, status, startedAt, durationMs: performance.now() - started, arguments: args, result },
        deps.logError,
      );
    const tool = (await exposed()).get(name);
    if (!tool) {
      await audit(null, name, 'denied');
      // The same answer for a tool that does not exist and one the caller is not granted.
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const call = deps.running.start(caller.credential, ctx.mcpReq.id);
    let status: McpCallStatus = 'error';
    let result: CallToolResult | undefined;
    try {
      return await guarded(async () => {
        try {
          result = await deps.tools.call(caller.principal, tool, args, {
            // The client's cancel (another POST), or its closed stream (2026-07-28).
            signal: AbortSignal.any([call.signal, ctx.mcpReq.signal]),
            ...progressTo(ctx, request.params._meta?.progressToken),
          });
          status = result.isError ? 'error' : 'ok';
          return result;
        } catch (error) {
          status = failedCallStatus(error);
          throw error;
        }
      });
    } finally {
      call.end();
      await audit(tool.server, tool.name, status, result);
    }
  });
  return server;
}

/** Progress from upstream to the client, when the client asked for it (it sent a progress token). */
function progressTo(ctx: ServerContext, token: string | number | undefined) {
  if (token === undefined) return {};
  return {
    onProgress: (progress: { progress: number; total?: number; message?: string }) => {
      // Related to this request: the SDK upgrades the answer to an event stream and sends it there.
      ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } }).catch(() => {});
    },
  };
}

/**
 * Protocol errors pass as they are, and so does an upstream's own JSON-RPC error. A
 * call that reached no result (timeout, cancel, an upstream out of reach) is an
 * internal error with the registry's message, written to be shown; anything else (a
 * database error) says no more than that something failed, because exception
 * messages can carry addresses and internals.
 */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    if (error instanceof ToolCallFailed)
      throw new ProtocolError(
        (error.reason === 'error' || error.reason === 'denied') && error.code !== undefined ? error.code : ProtocolErrorCode.InternalError,
        error.message,
      );
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      error instanceof AppError ? error.detail : 'The tool server failed to answer.',
    );
  }
}
