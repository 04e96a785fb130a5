// `tools: [{type: "mcp", …}]` on a response: MCP servers the platform runs the tools
// of itself. A tool names a registered server the caller reaches through its grant:
// `server_url` equal to the URL of one of the tenant's servers, or else `server_label`
// equal to a server's name. Anything else is a 400 naming the field, worded the same
// whether the server is another tenant's, not granted or not there at all. The caller's
// own credential is never sent upstream, so `headers` and `authorization` are refused.
//
// Which tools the model is offered: the server's granted tools (the ToolSource's list,
// pinned definitions only), filtered by `allowed_tools`, under their own names (made
// safe for the providers as the MCP endpoint's one-server route makes them).
// `require_approval`: "always", "never", or {always: filter, never: filter} as OpenAI
// documents it (a tool matching neither needs approval). Absent, it is "never": unlike
// OpenAI, which reaches arbitrary servers, every server here was registered by an
// admin, its tool definitions pinned and approved, and each tool granted to the key.
import type { ToolDefinition } from '../../../engines/types.js';
import type { Principal } from '../../../platform/identity.js';
import { validation } from '../../../platform/errors.js';
import { exposeTools } from '../mcp/endpoint/tool-names.js';
import type { GrantedTool, ToolSource } from '../mcp/tool-source.js';
import { checkText } from './checks.js';

interface ToolFilter {
  tool_names?: string[];
  read_only?: boolean;
}

/** An mcp tool as asked (kept in the response's `tools`, as OpenAI echoes it). */
export interface McpToolSpec {
  type: 'mcp';
  server_label: string;
  server_url?: string;
  server_description?: string;
  allowed_tools?: string[] | ToolFilter | null;
  require_approval?: 'always' | 'never' | { always?: ToolFilter; never?: ToolFilter } | null;
}

/** One mcp tool resolved: its server and the tools the model is offered, by the name the model calls. */
export interface McpServerPlan {
  /** The tool's place in `tools`, for the list item's id. */
  index: number;
  label: string;
  tools: Map<string, GrantedTool>;
  needsApproval: (tool: GrantedTool) => boolean;
}

export interface McpPlan {
  servers: McpServerPlan[];
  /** Every offered tool by the name the model calls it. */
  byName: Map<string, { server: McpServerPlan; tool: GrantedTool }>;
}

/** The longest step chain of a response: this many model turns, then it ends `incomplete` (`max_tool_calls`). */
export const MAX_MCP_STEPS = 8;

const LABEL = /^[a-zA-Z0-9_-]{1,64}$/;
const REFUSED = ['headers', 'authorization', 'connector_id', 'tunnel_id'] as const;

export function mcpSpecOf(tool: Record<string, unknown>, at: string): McpToolSpec {
  for (const field of REFUSED)
    if (tool[field] != null)
      throw validation(
        `${at}.${field}`,
        field === 'headers' || field === 'authorization'
          ? 'is not taken: the gateway calls the server with its own registered credential, never the caller’s'
          : 'is not supported: name a registered MCP server with server_label or server_url',
      );
  const label = checkText(tool.server_label, `${at}.server_label`, 64, 'line');
  if (!LABEL.test(label)) throw validation(`${at}.server_label`, 'must be 1 to 64 letters, digits, _ or -');
  const url = tool.server_url == null ? undefined : checkText(tool.server_url, `${at}.server_url`, 2048, 'line');
  const description = tool.server_description == null ? undefined : checkText(tool.server_description, `${at}.server_description`, 4096);
  return {
    type: 'mcp',
    server_label: label,
    ...(url !== undefined ? { server_url: url } : {}),
    ...(description !== undefined ? { server_description: description } : {}),
    allowed_tools: allowedOf(tool.allowed_tools, `${at}.allowed_tools`),
    require_approval: approvalOf(tool.require_approval, `${at}.require_approval`),
  };
}

function filterOf(raw: unknown, at: string): ToolFilter {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw validation(at, 'must be an object {tool_names?, read_only?}');
  const f = raw as Record<string, unknown>;
  const filter: ToolFilter = {};
  if (f.tool_names != null) filter.tool_names = namesOf(f.tool_names, `${at}.tool_names`);
  if (f.read_only != null) {
    if (typeof f.read_only !== 'boolean') throw validation(`${at}.read_only`, 'must be a boolean');
    filter.read_only = f.read_only;
  }
  return filter;
}

function namesOf(raw: unknown, at: string): string[] {
  if (!Array.isArray(raw) || raw.length > 500) throw validation(at, 'must be an array of at most 500 tool names');
  return raw.map((name, i) => checkText(name, `${at}[${i}]`, 128, 'line'));
}

function allowedOf(raw: unknown, at: string): McpToolSpec['allowed_tools'] {
  if (raw == null) return null;
  return Array.isArray(raw) ? namesOf(raw, at) : filterOf(raw, at);
}

function approvalOf(raw: unknown, at: string): McpToolSpec['require_approval'] {
  if (raw == null) return null;
  if (raw === 'always' || raw === 'never') return raw;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw validation(at, 'must be "always", "never" or {always?, never?}');
  const r = raw as Record<string, unknown>;
  return {
    ...(r.always != null ? { always: filterOf(r.always, `${at}.always`) } : {}),
    ...(r.never != null ? { never: filterOf(r.never, `${at}.never`) } : {}),
  };
}

const readOnly = (tool: GrantedTool) => tool.definition.annotations?.readOnlyHint === true;

function matches(filter: ToolFilter | undefined, tool: GrantedTool): boolean {
  if (!filter) return false;
  if (filter.tool_names && !filter.tool_names.includes(tool.name)) return false;
  if (filter.read_only !== undefined && readOnly(tool) !== filter.read_only) return false;
  return filter.tool_names !== undefined || filter.read_only !== undefined;
}

function allows(allowed: McpToolSpec['allowed_tools'], tool: GrantedTool): boolean {
  if (allowed == null) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  if (allowed.tool_names && !allowed.tool_names.includes(tool.name)) return false;
  return allowed.read_only === undefined || readOnly(tool) === allowed.read_only;
}

function approvalRule(asked: McpToolSpec['require_approval']): (tool: GrantedTool) => boolean {
  if (asked == null || asked === 'never') return () => false;
  if (asked === 'always') return () => true;
  return (tool) => matches(asked.always, tool) || !matches(asked.never, tool);
}

const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
};

/**
 * Resolves every mcp tool to a server the caller reaches, and lists its granted tools
 * (the registry's cached, pinned listing). `taken`: the function tools' names, which
 * an MCP tool's name may not repeat. Throws the 400s before anything is stored.
 */
export async function planMcp(
  source: ToolSource,
  principal: Principal,
  specs: { spec: McpToolSpec; index: number }[],
  taken: Set<string>,
): Promise<McpPlan> {
  const reachable = await source.servers(principal);
  const labels = new Set<string>();
  const plan: McpPlan = { servers: [], byName: new Map() };
  for (const { spec, index } of specs) {
    const at = `tools[${index}]`;
    if (labels.has(spec.server_label)) throw validation(`${at}.server_label`, `must be unique: "${spec.server_label}" is given twice`);
    labels.add(spec.server_label);
    const server =
      spec.server_url !== undefined
        ? reachable.find((s) => s.url !== undefined && sameUrl(s.url, spec.server_url!))
        : reachable.find((s) => s.name === spec.server_label);
    // One wording for a server of another tenant, one not granted and one not there.
    if (!server)
      throw spec.server_url !== undefined
        ? validation(`${at}.server_url`, 'is not the URL of a registered MCP server this caller may use')
        : validation(`${at}.server_label`, 'names no registered MCP server this caller may use');
    const granted = (await source.list(principal, server.name)).filter((tool) => allows(spec.allowed_tools, tool));
    const entry: McpServerPlan = {
      index,
      label: spec.server_label,
      tools: exposeTools(granted, false),
      needsApproval: approvalRule(spec.require_approval),
    };
    for (const [name, tool] of entry.tools) {
      if (taken.has(name) || plan.byName.has(name))
        throw validation(`${at}.server_label`, `its tool "${name}" has the name of another tool in tools: offer one of them`);
      plan.byName.set(name, { server: entry, tool });
    }
    plan.servers.push(entry);
  }
  return plan;
}

/** The plan's tools as the engine takes them. */
export function engineToolsOf(plan: McpPlan): ToolDefinition[] {
  return [...plan.byName].map(([name, { tool }]) => ({
    type: 'function',
    function: {
      name,
      ...(tool.definition.description ? { description: tool.definition.description } : {}),
      parameters: tool.definition.inputSchema as Record<string, unknown>,
    },
  }));
}
