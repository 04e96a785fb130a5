// A legacy (2024-11-05 "HTTP+SSE") MCP server for the upstream fallback tests. SDK v2's
// server package has no SSE server transport any more, so the wire format is written
// here as the 2024-11-05 spec gives it: GET /sse opens an event stream whose first event
// is `endpoint` (the URL to POST messages to); each POST /messages?sessionId=… is
// answered 202 and its response arrives on the stream as an event `message`. A POST to
// /sse (what a Streamable HTTP client tries first) is 405, as on such servers. The MCP
// side is the SDK's own low-level Server over that transport.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Server, type JSONRPCMessage, type Tool, type Transport } from '@modelcontextprotocol/server';

export interface LegacyUpstream {
  /** The SSE endpoint: http://127.0.0.1:port/sse */
  url: string;
  tools: Tool[];
  calls: string[];
  /** Every request received: method, path and headers. */
  requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
  /** When set, the `endpoint` event names this URL instead of the server's own /messages. */
  announceEndpoint?: string;
  close(): Promise<void>;
}

class LegacySseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  constructor(private readonly stream: ServerResponse) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
  async close(): Promise<void> {
    this.stream.end();
    this.onclose?.();
  }
}

export async function startLegacyUpstream(tools: Tool[]): Promise<LegacyUpstream> {
  const sessions = new Map<string, LegacySseTransport>();
  const mock: LegacyUpstream = { url: '', tools, calls: [], requests: [], close: async () => {} };

  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://localhost');
    mock.requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: req.headers });

    if (url.pathname === '/sse' && req.method === 'GET') {
      const sessionId = randomUUID();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const transport = new LegacySseTransport(res);
      sessions.set(sessionId, transport);
      res.on('close', () => sessions.delete(sessionId));
      const server = new Server({ name: 'legacy-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', async () => ({ tools: mock.tools }));
      server.setRequestHandler('tools/call', async (request) => {
        mock.calls.push(request.params.name);
        return { content: [{ type: 'text', text: `legacy ${request.params.name}` }] };
      });
      await server.connect(transport);
      res.write(`event: endpoint\ndata: ${mock.announceEndpoint ?? `/messages?sessionId=${sessionId}`}\n\n`);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('unknown session');
        return;
      }
      res.writeHead(202).end('Accepted');
      transport.onmessage?.(JSON.parse(Buffer.concat(chunks).toString('utf8')) as JSONRPCMessage);
      return;
    }
    res.writeHead(url.pathname === '/sse' ? 405 : 404, { allow: 'GET' }).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  mock.url = `http://127.0.0.1:${port}/sse`;
  mock.close = async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  };
  return mock;
}
