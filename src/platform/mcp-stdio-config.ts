// GATEWAY_MCP_STDIO_SERVERS: the path of a JSON file naming MCP servers the gateway starts
// as child processes (stdio transport). Only the operator's configuration may name a
// command: the API never accepts one (LiteLLM's CVE-2026-42271 ran commands a test
// endpoint was given). A path, not inline JSON, because entries carry the children's
// own secrets in `env`: a file can be readable by the gateway's user alone.
import { readFileSync } from 'node:fs';
import { ConfigError } from './config-reader.js';

export interface StdioServerConfig {
  /** The server's slug ([a-z0-9-]{1,32}), as for registered servers: the prefix of its tools. */
  name: string;
  command: string;
  args: string[];
  /** The child's whole environment besides PATH (and the SDK's few harmless defaults: HOME, USER, SHELL, TERM, LOGNAME). */
  env: Record<string, string>;
  /** Tenants served; empty: every tenant. */
  tenantIds: string[];
  timeoutSeconds: number;
}

const VARIABLE = 'GATEWAY_MCP_STDIO_SERVERS';
const SLUG = /^[a-z0-9-]{1,32}$/;

export function readStdioServers(file: string | undefined): StdioServerConfig[] {
  if (file === undefined || file.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(VARIABLE, `could not be read as a JSON file (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed))
    throw new ConfigError(VARIABLE, 'the file must hold a JSON array of {name, command, args?, env?, tenantIds?, timeoutSeconds?}');
  const names = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const at = `entry ${index}`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new ConfigError(VARIABLE, `${at} must be an object`);
    const { name, command, args = [], env = {}, tenantIds = [], timeoutSeconds = 60, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new ConfigError(VARIABLE, `${at}: unknown field ${unknown[0]}`);
    if (typeof name !== 'string' || !SLUG.test(name)) throw new ConfigError(VARIABLE, `${at}: name must match [a-z0-9-]{1,32}`);
    if (names.has(name)) throw new ConfigError(VARIABLE, `${at}: name "${name}" appears twice`);
    names.add(name);
    if (typeof command !== 'string' || command.trim() === '') throw new ConfigError(VARIABLE, `${at}: command must be a non-empty string`);
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
      throw new ConfigError(VARIABLE, `${at}: args must be an array of strings`);
    if (!env || typeof env !== 'object' || Array.isArray(env) || !Object.values(env).every((v) => typeof v === 'string'))
      throw new ConfigError(VARIABLE, `${at}: env must be an object of strings`);
    if (!Array.isArray(tenantIds) || !tenantIds.every((t) => typeof t === 'string'))
      throw new ConfigError(VARIABLE, `${at}: tenantIds must be an array of tenant ids`);
    if (typeof timeoutSeconds !== 'number' || !Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 3600)
      throw new ConfigError(VARIABLE, `${at}: timeoutSeconds must be an integer from 1 to 3600`);
    return { name, command, args, env: env as Record<string, string>, tenantIds, timeoutSeconds };
  });
}
