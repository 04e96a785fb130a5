// The upstream the conformance suite is pointed at (through the gateway): the parts of the
// TypeScript SDK's conformance fixture (test/conformance/src/everythingServer.ts in
// modelcontextprotocol/typescript-sdk) that the server scenarios call by name, with the
// same names and answers, built with the official SDK's low-level Server behind
// createMcpHandler (both eras, stateless) on loopback.
//
// Left out on purpose: the tools that make server→client requests (test_sampling,
// test_elicitation*, test_reconnection) and the 2026-07-28 input_required (MRTR) tools.
// A stateless gateway relays neither; the scenarios that need them are in
// expected-failures.yaml with that reason.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  Server,
  type CallToolResult,
  type GetPromptResult,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const noArguments = { type: 'object' as const, properties: {} };
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type ToolHandler = (args: Record<string, unknown>, ctx: ServerContext) => Promise<CallToolResult>;
const tools: Record<string, { description: string; run: ToolHandler }> = {
  test_simple_text: {
    description: 'Tests simple text content response',
    run: async () => text('This is a simple text response for testing.'),
  },
  test_image_content: {
    description: 'Tests image content response',
    run: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  },
  test_audio_content: {
    description: 'Tests audio content response',
    run: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  },
  test_embedded_resource: {
    description: 'Tests embedded resource content response',
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
        },
      ],
    }),
  },
  test_multiple_content_types: {
    description: 'Tests response with multiple content types (text, image, resource)',
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
  test_tool_with_logging: {
    description: 'Tests tool that emits log messages during execution',
    run: async (_args, ctx) => {
      for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } });
        await pause(20);
      }
      return text('Tool with logging executed successfully');
    },
  },
  test_tool_with_progress: {
    description: 'Tests tool that reports progress notifications',
    run: async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      // Progress only for a client that asked for it (a token), as the spec says.
      for (const progress of progressToken === undefined ? [] : [0, 50, 100]) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        });
        await pause(20);
      }
      return text(String(progressToken ?? 'no-progress-token'));
    },
  },
  test_error_handling: {
    description: 'Tests error response handling',
    run: async () => ({ content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }], isError: true }),
  },
  // 2026-07-28 `server-stateless` diagnostics, named as that scenario expects.
  test_streaming_elicitation: {
    description: 'SEP-2575: yields a response stream carrying no independent top-level JSON-RPC requests',
    run: async () => text('stream observed: result frames only, no top-level requests'),
  },
  test_logging_tool: {
    description: 'SEP-2575: logs only when the request set _meta.logLevel',
    run: async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged through the request-scoped, logLevel-gated channel');
    },
  },
};

const resources = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', mimeType: 'image/png' },
  { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', mimeType: 'text/plain' },
];
const resourceText: Record<string, string> = {
  'test://static-text': 'This is the content of the static text resource.',
  'test://watched-resource': 'Watched resource content',
};

const prompts = [
  { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt that includes image content' },
];

function buildServer(): Server {
  const server = new Server(
    { name: 'mcp-conformance-test-server', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  server.setRequestHandler('tools/list', async () => ({
    tools: Object.entries(tools).map(([name, { description }]): Tool => ({ name, description, inputSchema: noArguments })),
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const found = tools[request.params.name];
    if (!found) return { content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }], isError: true };
    return found.run(request.params.arguments ?? {}, ctx);
  });
  server.setRequestHandler('resources/list', async () => ({ resources }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [
      { uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', mimeType: 'application/json' },
    ],
  }));
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id)
      return {
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
      };
    const body = resourceText[uri];
    if (body === undefined) throw Object.assign(new Error(`Resource ${uri} not found`), { code: -32602 });
    return { contents: [{ uri, mimeType: 'text/plain', text: body }] };
  });
  server.setRequestHandler('resources/subscribe', async () => ({}));
  server.setRequestHandler('resources/unsubscribe', async () => ({}));
  server.setRequestHandler('prompts/list', async () => ({ prompts }));
  server.setRequestHandler('prompts/get', async (request) => {
    const args = request.params.arguments ?? {};
    const user = (content: GetPromptResult['messages'][number]['content']) => ({ role: 'user' as const, content });
    switch (request.params.name) {
      case 'test_simple_prompt':
        return { messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] };
      case 'test_prompt_with_arguments':
        return { messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })] };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            user({
              type: 'resource',
              resource: { uri: String(args.resourceUri), mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
            }),
            user({ type: 'text', text: 'Please process the embedded resource above.' }),
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            user({ type: 'image', data: PNG, mimeType: 'image/png' }),
            user({ type: 'text', text: 'Please analyze the image above.' }),
          ],
        };
      default:
        throw Object.assign(new Error(`Prompt ${request.params.name} not found`), { code: -32602 });
    }
  });
  server.setRequestHandler('logging/setLevel', async () => ({}));
  server.setRequestHandler('completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return server;
}

export interface EverythingServer {
  /** http://127.0.0.1:port/mcp */
  url: string;
  close(): Promise<void>;
}

export async function startEverythingServer(): Promise<EverythingServer> {
  const handler = createMcpHandler(buildServer);
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const hasBody = req.method === 'POST';
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method,
        headers,
        signal: closed.signal,
        ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    try {
      if (response.body) for await (const chunk of response.body) res.write(chunk);
    } catch {
      // The gateway went away mid-stream.
    }
    res.end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await handler.close?.();
    },
  };
}
