// Tool pinning (the defence against "rug pulls": a tool definition changed after it
// was approved). Each tool is hashed over what a model reads of it; the first listing
// pins them, and a later listing that differs is held back as pending until approved.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/server';

export interface PinnedTool {
  name: string;
  /** SHA-256 (hex) of the canonical JSON of the hashed fields. */
  sha256: string;
  definition: Tool;
}

// What a model sees of a tool, and so what may not change unnoticed. Icons and _meta
// are left out: no model reads them, and servers rewrite _meta freely.
const HASHED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export function pinTool(tool: Tool): PinnedTool {
  const definition: Record<string, unknown> = {};
  for (const field of HASHED_FIELDS) if (tool[field] !== undefined) definition[field] = tool[field];
  return {
    name: tool.name,
    sha256: createHash('sha256').update(canonicalJson(definition)).digest('hex'),
    definition: definition as Tool,
  };
}

/** True when both sets hold the same tools with the same hashes (order aside). */
export function sameTools(a: readonly PinnedTool[], b: readonly PinnedTool[]): boolean {
  if (a.length !== b.length) return false;
  const hashes = new Map(a.map((t) => [t.name, t.sha256]));
  return b.every((t) => hashes.get(t.name) === t.sha256);
}

export interface ToolChanges {
  added: PinnedTool[];
  changed: PinnedTool[];
  removed: string[];
}

/** What approving `current` would change of `pinned`. */
export function diffTools(pinned: readonly PinnedTool[], current: readonly PinnedTool[]): ToolChanges {
  const before = new Map(pinned.map((t) => [t.name, t.sha256]));
  const now = new Set(current.map((t) => t.name));
  return {
    added: current.filter((t) => !before.has(t.name)),
    changed: current.filter((t) => before.has(t.name) && before.get(t.name) !== t.sha256),
    removed: pinned.filter((t) => !now.has(t.name)).map((t) => t.name),
  };
}

/** JSON with object keys sorted at every depth, so equal definitions hash equal whatever order a server sends. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
