// An upstream MCP server with prompts and resources (and one tool), built with the SDK's
// low-level Server behind createMcpHandler on loopback, recording which prompts were
// fetched and which URIs read: what reaches it is what the grants let through.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  UriTemplate,
} from '@modelcontextprotocol/server';

export interface ContentUpstream {
  url: string;
  /** Names of the prompts fetched (prompts/get), in order. */
  gets: string[];
  /** URIs read (resources/read), in order. */
  reads: string[];
  close(): Promise<void>;
}

export interface ContentSpec {
  prompts: string[];
  resources: string[];
  /** One resource template (RFC 6570), e.g. docs://pages/{id}. */
  template?: string;
}

export async function startContentUpstream(label: string, spec: ContentSpec): Promise<ContentUpstream> {
  const mock: ContentUpstream = { url: '', gets: [], reads: [], close: async () => {} };
  const handler = createMcpHandler(() => {
    const server = new Server({ name: `${label}-upstream`, version: '1.0.0' }, { capabilities: { tools: {}, prompts: {}, resources: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'noop', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler('prompts/list', async () => ({
      prompts: spec.prompts.map((name) => ({ name, description: `${label} ${name}`, arguments: [{ name: 'who' }] })),
    }));
    server.setRequestHandler('prompts/get', async (request) => {
      const { name, arguments: args } = request.params;
      if (!spec.prompts.includes(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no prompt ${name}`);
      mock.gets.push(name);
      return { messages: [{ role: 'user', content: { type: 'text', text: `${label}/${name} for ${args?.who ?? 'nobody'}` } }] };
    });
    server.setRequestHandler('resources/list', async () => ({
      resources: spec.resources.map((uri) => ({ uri, name: uri, mimeType: 'text/plain' })),
    }));
    server.setRequestHandler('resources/templates/list', async () => ({
      resourceTemplates: spec.template ? [{ uriTemplate: spec.template, name: `${label} page` }] : [],
    }));
    server.setRequestHandler('resources/read', async (request) => {
      const { uri } = request.params;
      mock.reads.push(uri);
      const known = spec.resources.includes(uri) || (spec.template !== undefined && new UriTemplate(spec.template).match(uri) !== null);
      if (!known) throw new ResourceNotFoundError(uri);
      return { contents: [{ uri, mimeType: 'text/plain', text: `${label} says ${uri}` }] };
    });
    return server;
  });
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const hasBody = req.method === 'POST';
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, ...(hasBody ? { body: Buffer.concat(chunks) } : {}) }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  mock.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  mock.close = async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  };
  return mock;
}
