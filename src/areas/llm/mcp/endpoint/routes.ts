// The MCP endpoint, what MCP clients connect to:
//   POST /api/llm/v1/mcp               every granted tool of every server, as `{server}_{tool}`
//   POST /api/llm/v1/mcp/{serverName}  one server's granted tools, under their own names
// Stateless: each POST is answered by a fresh SDK server built for its caller, no
// `Mcp-Session-Id` is minted, and any replica answers any request; GET and DELETE
// (the 2025 session stream and session end) are 405. Both protocol eras are served on
// the same path by the SDK's createMcpHandler: 2025-11-25 (`initialize`, notifications
// 202) and 2026-07-28 (`server/discover`, Mcp-Method/Mcp-Name checked against the body).
// The edge has already resolved the credential (API key or a user's token); what a
// caller may see and run is the ToolSource's to say (registry/).
import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { Type } from '@fastify/type-provider-typebox';
import { principalOf } from '../../../guard.js';
import { AppError } from '../../../../platform/errors.js';
import type { ToolSource } from '../tool-source.js';
import { idOf, parseMessage, readBody, Refusal, refusal, SERVER_ERROR } from './json-rpc.js';
import { RunningCalls, type McpCallBus } from './running-calls.js';
import { toolServerFor } from './tool-server.js';
import { sendWebResponse, toWebRequest } from './web-exchange.js';
import { MAX_ARGUMENT_BYTES } from './message-limits.js';
import { recordCall, type McpCallAudit } from '../calls/audit.js';
import type { Principal } from '../../../../platform/identity.js';
import type { ToolCallLimiter } from '../../rate-limits/tool-calls.js';

export interface McpEndpointDeps {
  /** Read at every request: the registry's tool source (tests put a fake one in its place). */
  toolSource: () => ToolSource;
  /** Carries cancels to the replica running the call (running-calls.ts). */
  bus: McpCallBus;
  /** Browser origins allowed to call (GATEWAY_CORS_ORIGINS); any other Origin is refused with 403. */
  corsOrigins: readonly string[];
  /** Where each tools/call's audit record goes (../calls/audit.ts). */
  audit: McpCallAudit;
  /**
   * toolCallsPerMinute of the caller's key and tenant, counted for each tools/call before the
   * SDK server sees it: over the limit is HTTP 429 with Retry-After, and no upstream is reached.
   */
  toolCallLimits: Pick<ToolCallLimiter, 'admit'>;
  /** Out-of-band SDK errors and refused requests, for the log (never argument or result content). */
  logError?: (error: Error) => void;
}

/** Arguments may be 1 MiB (message-limits.ts); the envelope around them gets the rest. */
export const MAX_MESSAGE_BYTES = MAX_ARGUMENT_BYTES + 256 * 1024;

const ServerParams = Type.Object({ serverName: Type.String({ pattern: '^[a-z0-9-]{1,32}$' }) });

export const mcpEndpointRoutes: FastifyPluginAsync<{ deps: McpEndpointDeps }> = async (app, { deps }) => {
  const running = new RunningCalls(deps.bus);
  app.addHook('onClose', async () => running.close());
  const allowedOrigins = new Set(deps.corsOrigins);

  // These routes read their own bodies (json-rpc.ts): not JSON is -32700, not the API's problem+json.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  // MCP clients start their OAuth discovery from this challenge (the spec's MUST on 401).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', 'Bearer');
    return payload;
  });
  // DNS rebinding and cross-site calls from a browser: an Origin CORS does not allow is refused.
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin))
      throw new AppError('FORBIDDEN', 'Requests from this origin may not use the MCP endpoint (GATEWAY_CORS_ORIGINS).');
  });

  /** Arguments refused before the SDK server saw the call: audited as denied, no upstream reached. */
  const auditRefused = (principal: Principal, server: string | undefined, call: { name: string; arguments: unknown }) =>
    recordCall(
      deps.audit,
      {
        principal,
        server: server ?? null,
        tool: call.name,
        status: 'denied',
        startedAt: new Date(),
        durationMs: 0,
        arguments: call.arguments,
      },
      deps.logError,
    );

  const serve = async (request: FastifyRequest, reply: FastifyReply, server: string | undefined) => {
    const principal = principalOf(request);
    if (!isJson(request.headers['content-type']))
      return sendRefusal(reply, refusal(415, SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json.'));
    const bytes = await readBody(request.raw, MAX_MESSAGE_BYTES);
    if (bytes instanceof Refusal) return sendRefusal(reply.header('connection', 'close'), bytes);
    const message = parseMessage(bytes);
    if (message instanceof Refusal) {
      if (message.refusedCall) await auditRefused(principal, server, message.refusedCall);
      return sendRefusal(reply, message);
    }

    const credential = credentialOf(request, principal.tenantId, principal.subject);
    if (message.method === 'notifications/cancelled') {
      // Answered here: a fresh server instance has no call to cancel; the process running it does.
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') await running.cancel(credential, requestId);
      return reply.code(202).send();
    }

    // A server the caller reaches nothing of (none by that name, another tenant's, none of
    // its tools granted) does not exist for them: the same 404 for each, naming no other.
    if (server !== undefined && !(await deps.toolSource().servers(principal)).some((s) => s.name === server))
      return sendRefusal(reply, refusal(404, SERVER_ERROR, `Not found: no MCP server named ${server} for this caller.`, idOf(message)));

    if (message.method === 'tools/call') {
      // Here, not in the SDK server's handler: only before the SDK answers can the refusal be an HTTP status.
      const decision = await deps.toolCallLimits.admit(principal);
      reply.headers(decision.headers);
      if (!decision.admitted)
        return sendRefusal(
          reply.header('retry-after', String(decision.retryAfterSeconds)),
          refusal(429, SERVER_ERROR, decision.error.detail, idOf(message)),
        );
    }

    const caller = { principal, credential, server };
    // One handler, and so one server instance, per request: never shared between callers.
    const handler = createMcpHandler(
      () =>
        toolServerFor(
          { tools: deps.toolSource(), running, audit: deps.audit, ...(deps.logError ? { logError: deps.logError } : {}) },
          caller,
        ),
      {
        ...(deps.logError ? { onerror: deps.logError } : {}),
      },
    );
    const gone = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    try {
      const response = await handler.fetch(toWebRequest(request, bytes, gone.signal), { parsedBody: message });
      return sendWebResponse(reply, response);
    } catch (error) {
      // The client left before an answer existed: there is no one to send one to.
      if (gone.signal.aborted) return reply;
      throw error;
    }
  };

  const mcp = { config: { access: 'tenant' as const } };
  app.post('/mcp', mcp, (request, reply) => serve(request, reply, undefined));
  app.post('/mcp/:serverName', { ...mcp, schema: { params: ServerParams } }, (request, reply) =>
    serve(request, reply, (request.params as { serverName: string }).serverName),
  );
  // The 2025 session operations: without sessions there is no stream to open and none to end.
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    sendRefusal(
      reply.header('allow', 'POST'),
      refusal(405, SERVER_ERROR, 'Method not allowed: this endpoint is stateless; POST each message.'),
    );
  for (const url of ['/mcp', '/mcp/:serverName']) {
    const schema = url === '/mcp' ? {} : { schema: { params: ServerParams } };
    app.get(url, { ...mcp, ...schema }, notAllowed);
    app.delete(url, { ...mcp, ...schema }, notAllowed);
  }
};

const isJson = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';

const sendRefusal = (reply: FastifyReply, { status, body }: Refusal) => reply.code(status).type('application/json').send(body);

/** The caller's credential, hashed: cancels are matched per (credential, request id), and the credential itself is kept nowhere. */
function credentialOf(request: FastifyRequest, tenantId: string, subject: string): string {
  const presented = String(request.headers['x-api-key'] ?? request.headers.authorization ?? '');
  return createHash('sha256').update(`${tenantId}\0${subject}\0${presented}`).digest('hex');
}
