// Which MCP tools a grant reaches: a list of `server/*` (every tool of one server) and
// `server/tool` (one tool). Set on an API key by its tenant's admin (api_keys.mcp) and
// for a tenant's members in the tenant's llm settings (mcp.memberAllow); carried in the
// Principal for keys. Here in platform/ because the auth area stores the key's and the
// llm area decides with it, and neither may import the other.
import { Type, type Static } from '@fastify/type-provider-typebox';

/** How many patterns one grant may hold. */
export const MAX_MCP_GRANT_PATTERNS = 500;

/** `server/*` or `server/tool`: the server's slug, a slash, `*` or one tool's name (no spaces, no `*`). */
export const McpGrantPattern = Type.String({
  pattern: '^[a-z0-9-]{1,32}/(\\*|[^\\s*]{1,128})$',
  maxLength: 161,
  description: '"server/*" (every tool of the server) or "server/tool"',
});

export const McpGrantList = Type.Array(McpGrantPattern, { maxItems: MAX_MCP_GRANT_PATTERNS, uniqueItems: true });
export type McpGrantList = Static<typeof McpGrantList>;

/** Whether one of `allow` reaches `tool` of the server named `server`. Nothing is granted by an empty list. */
export function grantsTool(allow: readonly string[] | undefined, server: string, tool: string): boolean {
  if (!allow) return false;
  return allow.some((pattern) => {
    const slash = pattern.indexOf('/');
    if (slash < 0 || pattern.slice(0, slash) !== server) return false;
    const wanted = pattern.slice(slash + 1);
    return wanted === '*' || wanted === tool;
  });
}

/** The list as stored (jsonb) or carried, keeping only strings: anything else grants nothing. */
export function grantListFrom(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((p): p is string => typeof p === 'string') : [];
}
