// The names the endpoint shows MCP clients. On the all-servers route a tool is
// `{server}_{tool}`, held to what the model providers accept for a function name
// (`^[A-Za-z0-9_-]{1,64}$`; MCP itself allows 128 characters and dots): other
// characters become `_`, and a name that had to change, or is too long, ends in a
// hash of the server and tool instead, so it is the same on every replica and every
// listing and cannot collide with another tool's. On a one-server route a tool keeps
// its own name. Prompts are named the same way.
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME_LENGTH = 64;
const HASH_LENGTH = 8;
const NOT_ALLOWED = /[^A-Za-z0-9_-]/g;

/** The name of a tool on the all-servers route. */
export function prefixedToolName(server: string, tool: string): string {
  const joined = `${server}_${tool}`;
  const cleaned = joined.replace(NOT_ALLOWED, '_');
  if (cleaned === joined && cleaned.length <= MAX_TOOL_NAME_LENGTH) return cleaned;
  return withHash(cleaned, server, tool, HASH_LENGTH);
}

function withHash(cleaned: string, server: string, tool: string, hashLength: number): string {
  // The NUL cannot occur in either part: the hash tells `a_b`+`c` from `a`+`b_c`.
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, hashLength);
  return `${cleaned.slice(0, MAX_TOOL_NAME_LENGTH - hashLength - 1)}_${hash}`;
}

/**
 * Each tool under the name a client sees, in the order given. Server slugs have no
 * `_`, so unchanged names are unique; a hashed name that still meets another (a
 * chance of one in 2³² per pair) takes a longer hash rather than hide a tool.
 */
export function exposeTools<T extends { server: string; name: string }>(tools: readonly T[], prefixed: boolean): Map<string, T> {
  const byName = new Map<string, T>();
  for (const tool of tools) {
    let name = prefixed ? prefixedToolName(tool.server, tool.name) : tool.name;
    if (byName.has(name) && prefixed) name = withHash(`${tool.server}_${tool.name}`.replace(NOT_ALLOWED, '_'), tool.server, tool.name, 16);
    // On one server's route names are the upstream's own, unique there; a duplicate is the server's bug: the first wins.
    if (!byName.has(name)) byName.set(name, tool);
  }
  return byName;
}
