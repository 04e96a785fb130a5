// What the MCP endpoint tests share: a fake ToolSource (the registry's seam) that
// records every call reaching it, and SDK clients connected to the real gateway in
// either protocol era.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Principal } from '../../src/platform/identity.js';
import type { CallOptions, GrantedTool, ToolSource } from '../../src/areas/llm/mcp/tool-source.js';
import type { TestGateway } from '../helpers/gateway.js';

export type Behaviour = (args: Record<string, unknown>, options: CallOptions) => Promise<CallToolResult>;

export interface RecordedCall {
  principal: Principal;
  tool: GrantedTool;
  args: Record<string, unknown>;
  signal: AbortSignal;
}

/** Tools per tenant (and, optionally, per caller: `only` lists the subjects granted a tool). */
export class FakeToolSource implements ToolSource {
  readonly calls: RecordedCall[] = [];
  private readonly tools: { tenantId: string; tool: GrantedTool; only?: string[]; behaviour: Behaviour }[] = [];

  add(tenantId: string, server: string, definition: Partial<Tool> & { name: string }, behaviour?: Behaviour, only?: string[]): this {
    const tool: GrantedTool = {
      serverId: `mcps_${server}`,
      server,
      name: definition.name,
      definition: { inputSchema: { type: 'object' }, ...definition },
    };
    const echo: Behaviour = async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] });
    this.tools.push({ tenantId, tool, behaviour: behaviour ?? echo, ...(only ? { only } : {}) });
    return this;
  }

  async servers(principal: Principal) {
    const names = new Set((await this.list(principal)).map((t) => t.server));
    return [...names].map((name) => ({ name }));
  }

  async list(principal: Principal, server?: string): Promise<GrantedTool[]> {
    return this.tools
      .filter((t) => t.tenantId === principal.tenantId && (server === undefined || t.tool.server === server))
      .filter((t) => !t.only || t.only.includes(principal.subject))
      .map((t) => t.tool);
  }

  async call(principal: Principal, tool: GrantedTool, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const entry = this.tools.find((t) => t.tenantId === principal.tenantId && t.tool === tool);
    if (!entry) throw new Error('a call reached the source for a tool it never listed to this tenant');
    this.calls.push({ principal, tool, args, signal: options.signal });
    return entry.behaviour(args, options);
  }
}

export type Era = 'legacy' | 'auto' | 'pinned';
export const ERAS: Era[] = ['legacy', 'auto', 'pinned'];

/** An SDK client connected to `path` of the gateway with `headers` (the credential), negotiating as `era` says. */
export async function connectClient(gw: TestGateway, path: string, headers: Record<string, string>, era: Era): Promise<Client> {
  const mode = era === 'pinned' ? { pin: '2026-07-28' as const } : era;
  const client = new Client({ name: 'mcp-endpoint-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url + path), { requestInit: { headers } }));
  return client;
}

/** POSTs one raw body to the endpoint, as a client that cannot be trusted would. */
export async function post(gw: TestGateway, path: string, body: string, headers: Record<string, string>) {
  const response = await fetch(gw.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export const MCP = '/api/llm/v1/mcp';

/** Resolves once `check` holds, polling; for states another request brings about. */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${what}`);
}
