// How a response that ran MCP tools is kept in its conversation, and shown. Every
// item the platform adds is an item of the run with `payload.mcp` (output, never
// input): a listing (an assistant item with no text: the model never sees it); each
// model turn that called tools (the executor's item: its `tool_calls` stay, so the
// model sees its calls on later turns, and `payload.mcp` holds the mcp_call and
// mcp_approval_request items made of them); each call's result (a tool item the model
// sees, shown as nothing). A call waiting for approval is taken out of `tool_calls`
// (no call without a result in the history); once approved or refused it is added
// back with its result as an item of the response that answered it.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolCall } from '../../../engines/types.js';
import type { ItemRow } from '../history/repository.js';
import { MAX_CONTENT_CHARS } from '../chat/schemas.js';
import { callItem, messageItem, snippetsOf } from './objects.js';
import type { McpApprovalRequestItem, McpCallItem, McpListToolsItem, OutputItem } from './schemas.js';

/** What `payload.mcp` holds: the item as shown, and for calls the model's call id and the tool it ran. */
export interface StoredMcpItem {
  /** None for a call the caller refused: the model is told, nothing is shown. */
  item?: McpListToolsItem | McpCallItem | McpApprovalRequestItem;
  call_id?: string;
  /** The registered server's slug and the upstream tool's name (an approval is run with them). */
  server?: string;
  tool?: string;
  /** An approval request: the model's call, to put back into the history once answered. */
  call?: ToolCall;
}

const suffix = (itemId: string) => itemId.slice(itemId.indexOf('_') + 1);
/** Ids derived from the item and the position, so they read the same every time (as function calls' `fc_…`). */
export const listItemId = (itemId: string) => `mcpl_${suffix(itemId)}`;
export const mcpCallId = (itemId: string, index: number) => `mcp_${suffix(itemId)}_${index}`;
export const approvalRequestId = (itemId: string, index: number) => `mcpr_${suffix(itemId)}_${index}`;

export const storedMcp = (row: ItemRow | undefined): StoredMcpItem[] => (row?.payload?.mcp as StoredMcpItem[] | undefined) ?? [];

/**
 * A tool's result as the mcp_call's `output` (and what the model sees): its text parts;
 * other parts and `structuredContent` as JSON. A result with `isError` is the `error`.
 */
export function resultText(result: CallToolResult): { output: string | null; error: string | null } {
  const parts = result.content.map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)));
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  let text = parts.join('\n');
  if (text.length > MAX_CONTENT_CHARS) text = `${text.slice(0, MAX_CONTENT_CHARS - 40)}\n[result cut at ${MAX_CONTENT_CHARS} characters]`;
  return result.isError ? { output: null, error: text || 'The tool failed.' } : { output: text, error: null };
}

/** What the model is told of a call: its output, or its error. */
export const modelSees = (call: McpCallItem) => call.output ?? `Error: ${call.error ?? 'the call failed'}`;

/**
 * The output of a response that ran MCP tools: its items in order, each model turn's
 * text (when it has any; the last turn's always), its MCP items, its function calls.
 */
export function mcpOutputOf(rows: ItemRow[], finalId: string | null): OutputItem[] {
  const output: OutputItem[] = [];
  for (const row of rows) {
    if (row.role === 'tool') continue;
    const stored = storedMcp(row);
    const mcpCalls = new Set(stored.flatMap((s) => (s.call_id ? [s.call_id] : [])));
    const calls = (row.payload?.tool_calls ?? []).map((call, i) => ({ call, i })).filter(({ call }) => !mcpCalls.has(call.id));
    const last = row.id === finalId;
    if (row.content !== '' || (last && stored.length === 0 && calls.length === 0))
      output.push(messageItem(row.id, row.content, row.status, snippetsOf(row)));
    for (const s of stored) if (s.item) output.push(s.item);
    const status = row.status === 'in_progress' ? 'in_progress' : 'completed';
    for (const { call, i } of calls) output.push(callItem(row.id, i, call, status));
  }
  return output;
}
