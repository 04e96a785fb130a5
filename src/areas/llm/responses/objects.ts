// The Responses API's objects from the store's rows: the response (its run), its
// output (the run's assistant item: a message with output_text when it has text, a
// function_call item per call the model made) and its input items.
import type { ContentPart, ToolCall } from '../../../engines/types.js';
import type { Grounding } from '../grounding/ground.js';
import type { ItemRow } from '../history/repository.js';
import type { Snippet } from '../../grounding.js';
import { citationsIn, seconds } from '../threads/objects.js';
import type { ResponseRow } from './repository.js';
import type { InputItem, OutputItem, ResponseObject } from './schemas.js';

type Status = 'in_progress' | 'completed' | 'incomplete';

/** A function call's item id: derived from the output item and the call's index, so that it reads the same every time. */
export const callItemId = (itemId: string, index: number) => `fc_${itemId.slice(itemId.indexOf('_') + 1)}_${index}`;

export function messageItem(
  id: string,
  text: string,
  status: Status,
  snippets?: Snippet[] | null,
): Extract<OutputItem, { type: 'message' }> {
  return { id, type: 'message', role: 'assistant', status, content: [outputText(text, snippets)] };
}

export const outputText = (text: string, snippets?: Snippet[] | null) => ({
  type: 'output_text' as const,
  text,
  annotations: annotationsOf(text, snippets),
  logprobs: [],
});

/**
 * A grounded answer's `[n]` markers as OpenAI's file_citation annotations: the cited
 * document (file_id, filename) and where the marker is in the text (index).
 */
function annotationsOf(text: string, snippets: Snippet[] | null | undefined) {
  if (!snippets?.length) return [];
  return citationsIn(text, snippets).map((c) => ({
    type: 'file_citation' as const,
    file_id: c.file_citation.file_id,
    filename: snippets.find((s) => s.documentId === c.file_citation.file_id)?.documentName ?? '',
    index: c.start_index,
  }));
}

/** What grounding gave an answer, as stored with its item. */
export const snippetsOf = (item: ItemRow | undefined): Snippet[] | null =>
  (item?.grounding as Grounding | null | undefined)?.snippets ?? null;

export function callItem(itemId: string, index: number, call: ToolCall, status: Status): Extract<OutputItem, { type: 'function_call' }> {
  return {
    id: callItemId(itemId, index),
    type: 'function_call',
    call_id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
    status,
  };
}

/** The output items of an answer: its text as a message (also when there is nothing at all), then its calls. */
export function outputOf(item: ItemRow | undefined): OutputItem[] {
  if (!item) return [];
  const calls = item.payload?.tool_calls ?? [];
  const output: OutputItem[] = [];
  if (item.content !== '' || calls.length === 0) output.push(messageItem(item.id, item.content, item.status, snippetsOf(item)));
  const status = item.status === 'in_progress' ? 'in_progress' : 'completed';
  for (const [i, call] of calls.entries()) output.push(callItem(item.id, i, call, status));
  return output;
}

const STATUS: Record<string, string> = {
  queued: 'queued',
  in_progress: 'in_progress',
  cancelling: 'in_progress',
  completed: 'completed',
  incomplete: 'incomplete',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'incomplete',
};

// The run's incomplete reasons in OpenAI's Responses words.
const INCOMPLETE: Record<string, string> = { max_completion_tokens: 'max_output_tokens' };

/** `output`: a response that ran MCP tools shows more than its answer item (mcp-items.ts). */
export function responseObject(run: ResponseRow, item: ItemRow | undefined, output?: OutputItem[]): ResponseObject {
  const p = run.params;
  const usage = run.usage;
  const grounding = item?.grounding as Grounding | null | undefined;
  const reason = run.incomplete_details?.reason ?? (run.status === 'expired' ? 'expired' : undefined);
  return {
    id: run.id,
    object: 'response',
    created_at: seconds(run.created_at)!,
    completed_at: seconds(run.completed_at),
    status: STATUS[run.status] ?? run.status,
    background: false,
    error: run.last_error ? { code: run.last_error.code, message: run.last_error.message } : null,
    incomplete_details: reason ? { reason: INCOMPLETE[reason] ?? reason } : null,
    instructions: run.instructions,
    max_output_tokens: p.max_tokens ?? null,
    metadata: run.metadata,
    model: run.model,
    output: output ?? outputOf(item),
    parallel_tool_calls: p.parallel_tool_calls ?? true,
    previous_response_id: p.previous_response_id ?? null,
    conversation: p.conversation ? { id: p.conversation } : null,
    store: p.store !== false,
    temperature: p.temperature ?? null,
    text: { format: p.format ?? { type: 'text' } },
    tool_choice: typeof p.tool_choice === 'object' ? p.tool_choice : (p.tool_choice ?? 'auto'),
    tools: p.tools ?? [],
    top_p: p.top_p ?? 1,
    truncation: 'auto',
    usage: usage
      ? {
          input_tokens: usage.prompt_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.completion_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.total_tokens,
        }
      : null,
    ...(p.user !== undefined ? { user: p.user } : {}),
    ...(p.grounding ? { workspace_ids: p.grounding.workspaceIds ?? [], collection_ids: p.grounding.collectionIds ?? [] } : {}),
    ...(grounding ? { rag_snippets: grounding.snippets, rag_active: grounding.active, rag_status: grounding.status } : {}),
  };
}

/** A stored input item in OpenAI's shape. */
export function inputItemObject(row: ItemRow): InputItem {
  const p = row.payload;
  if (p?.mcp_approval)
    return {
      id: row.id,
      type: 'mcp_approval_response',
      approval_request_id: p.mcp_approval.approval_request_id,
      approve: p.mcp_approval.approve,
      reason: p.mcp_approval.reason ?? null,
    };
  if (row.role === 'tool')
    return { id: row.id, type: 'function_call_output', call_id: p?.tool_call_id ?? '', output: row.content, status: 'completed' };
  if (p?.tool_calls?.length && row.content === '') return callItem(row.id, 0, p.tool_calls[0]!, 'completed');
  const text = row.role === 'assistant' ? 'output_text' : 'input_text';
  const content = p?.parts
    ? p.parts.map((part) => partObject(part, text))
    : [text === 'output_text' ? outputText(row.content) : { type: 'input_text', text: row.content }];
  return { id: row.id, type: 'message', role: row.role, status: 'completed', content };
}

function partObject(part: ContentPart, text: 'input_text' | 'output_text'): Record<string, unknown> {
  if (part.type === 'text') return text === 'output_text' ? outputText(part.text) : { type: 'input_text', text: part.text };
  return { type: 'input_image', image_url: part.image_url.url, detail: part.image_url.detail ?? 'auto' };
}
