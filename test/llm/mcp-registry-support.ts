// A mock upstream MCP server for the registry tests: the SDK's low-level Server behind
// createMcpHandler (both protocol eras, stateless), on a loopback node:http server,
// recording every request it receives (headers included). Its tools can be changed
// while it runs; it also serves an OAuth token endpoint, and can redirect elsewhere.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server, type Tool } from '@modelcontextprotocol/server';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface MockUpstream {
  /** The MCP endpoint: http://127.0.0.1:port/mcp */
  url: string;
  /** The token endpoint: answers client-credentials grants with tok-1, tok-2… */
  tokenUrl: string;
  origin: string;
  requests: ReceivedRequest[];
  /** What tools/list answers (two per page); change it to change the server. */
  tools: Tool[];
  /** Names of tools whose calls reached the server, with their arguments. */
  calls: { name: string; args: unknown }[];
  /** Calls whose handler saw its signal abort (a cancel or a closed stream). */
  cancelled: string[];
  /** When set, every MCP request is answered with a 307 to this URL. */
  redirectTo?: string;
  /** The bearer token the MCP endpoint demands (401 otherwise), when set. */
  requireBearer?: string;
  close(): Promise<void>;
}

export const tool = (name: string, description = `${name} tool`): Tool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
});

export async function startMockUpstream(tools: Tool[] = [tool('echo'), tool('hang'), tool('progress')]): Promise<MockUpstream> {
  let tokens = 0;
  const mock: MockUpstream = {
    url: '',
    tokenUrl: '',
    origin: '',
    requests: [],
    tools,
    calls: [],
    cancelled: [],
    close: async () => {},
  };

  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'mock-upstream', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler('tools/list', async (request) => {
      const start = Number(request.params?.cursor ?? 0);
      const page = mock.tools.slice(start, start + 2);
      return { tools: page, ...(start + 2 < mock.tools.length ? { nextCursor: String(start + 2) } : {}) };
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name } = request.params;
      mock.calls.push({ name, args: request.params.arguments });
      ctx.mcpReq.signal.addEventListener('abort', () => mock.cancelled.push(name));
      if (name === 'hang') await new Promise((resolve) => ctx.mcpReq.signal.addEventListener('abort', resolve));
      if (name === 'progress') {
        const token = request.params._meta?.progressToken;
        for (let i = 1; i <= 3 && token !== undefined; i++)
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } });
      }
      // Any call may announce that the tool list changed, on its own response stream.
      if ((request.params.arguments as { announceListChanged?: boolean } | undefined)?.announceListChanged)
        await ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' });
      if (name === 'fails') return { content: [{ type: 'text', text: 'the tool failed' }], isError: true };
      return { content: [{ type: 'text', text: `${name}:${JSON.stringify(request.params.arguments ?? {})}` }] };
    });
    return server;
  });

  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    mock.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (path === '/token') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `tok-${++tokens}`, token_type: 'Bearer', expires_in: 3600 }));
      return;
    }
    if (mock.redirectTo) {
      res.writeHead(307, { location: mock.redirectTo });
      res.end();
      return;
    }
    if (mock.requireBearer && req.headers.authorization !== `Bearer ${mock.requireBearer}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":"unauthorized"}');
      return;
    }
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE';
    const response = await handler.fetch(
      new Request(`${mock.origin}${path}`, { method: req.method, headers, signal: closed.signal, ...(hasBody ? { body } : {}) }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    try {
      if (response.body) for await (const chunk of response.body) res.write(chunk);
    } catch {
      // The client went away mid-stream.
    }
    res.end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  mock.origin = `http://127.0.0.1:${port}`;
  mock.url = `${mock.origin}/mcp`;
  mock.tokenUrl = `${mock.origin}/token`;
  mock.close = async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await handler.close?.();
  };
  return mock;
}

/** The requests that reached the MCP endpoint (not the token endpoint). */
export const mcpRequests = (mock: MockUpstream) => mock.requests.filter((r) => r.path.startsWith('/mcp'));
