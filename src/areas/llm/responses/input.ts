// A response's `input` as the items it stores: a string is one user message; an
// array holds messages (roles user, system, developer, assistant; content a string
// or input_text / input_image / output_text parts), function_call items (a client
// keeping its own history sends back the calls the model made) and
// function_call_output items (a function's result). Every refusal is a 400 naming
// the field (`input[2].content[0].image_url`), never a schema union's muddle.
import type { ContentPart, ToolCall } from '../../../engines/types.js';
import { validation } from '../../../platform/errors.js';
import type { ItemPayload, ItemRole } from '../history/repository.js';
import { MAX_CONTENT_CHARS } from '../chat/schemas.js';
import { checkText } from './checks.js';

/** An item to append: the text in `content`, what text cannot hold in `payload`. */
export interface InputDraft {
  role: ItemRole;
  content: string;
  payload?: ItemPayload;
}

const MESSAGE_ROLES = new Set(['user', 'system', 'developer', 'assistant']);
const MAX_PARTS = 100;
const MAX_URL_CHARS = 20_000_000 / 2; // a data: URL of an image, within the body limit anyway

export function inputDrafts(input: string | unknown[] | undefined): InputDraft[] {
  if (input === undefined) throw validation('input', 'is required: a string or an array of input items');
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (input.length === 0) throw validation('input', 'must hold at least one item');
  const drafts: InputDraft[] = [];
  input.forEach((raw, i) => {
    const at = `input[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw validation(at, 'must be an object (an input item)');
    const item = raw as Record<string, unknown>;
    const type = item.type ?? 'message';
    if (type === 'message') drafts.push(messageOf(item, at));
    else if (type === 'function_call') addCall(drafts, item, at);
    else if (type === 'function_call_output') drafts.push(resultOf(item, at));
    else if (type === 'mcp_approval_response') drafts.push(approvalOf(item, at));
    else if (type === 'mcp_list_tools' || type === 'mcp_call' || type === 'mcp_approval_request')
      throw validation(`${at}.type`, 'the platform keeps its MCP items itself: continue with previous_response_id');
    else if (type === 'item_reference')
      throw validation(`${at}.type`, 'item references are not supported: send the item itself, or continue with previous_response_id');
    else throw validation(`${at}.type`, 'must be "message", "function_call", "function_call_output" or "mcp_approval_response"');
  });
  return drafts;
}

function messageOf(item: Record<string, unknown>, at: string): InputDraft {
  const role = item.role;
  if (typeof role !== 'string' || !MESSAGE_ROLES.has(role))
    throw validation(`${at}.role`, 'must be "user", "system", "developer" or "assistant"');
  const content = item.content;
  if (typeof content === 'string') return { role: role as ItemRole, content: checkText(content, `${at}.content`, MAX_CONTENT_CHARS) };
  if (!Array.isArray(content) || content.length === 0)
    throw validation(`${at}.content`, 'must be a string or a non-empty array of content parts');
  if (content.length > MAX_PARTS) throw validation(`${at}.content`, `must hold at most ${MAX_PARTS} parts`);
  const parts = content.map((part, j) => partOf(part, `${at}.content[${j}]`, role));
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  // Text alone is kept as text; images need their parts.
  return parts.some((p) => p.type !== 'text')
    ? { role: role as ItemRole, content: text, payload: { parts } }
    : { role: role as ItemRole, content: text };
}

function partOf(raw: unknown, at: string, role: string): ContentPart {
  if (raw === null || typeof raw !== 'object') throw validation(at, 'must be a content part object');
  const part = raw as Record<string, unknown>;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: checkText(part.text, `${at}.text`, MAX_CONTENT_CHARS) };
    case 'input_image': {
      if (role !== 'user') throw validation(`${at}.type`, 'images are taken in user messages only');
      if (part.file_id != null)
        throw validation(`${at}.file_id`, 'file ids are not supported: send the image as image_url (https or data: URL)');
      const url = checkText(part.image_url, `${at}.image_url`, MAX_URL_CHARS);
      if (!/^(https?:|data:image\/)/i.test(url)) throw validation(`${at}.image_url`, 'must be an http(s) URL or a data:image/… URL');
      const detail = part.detail ?? 'auto';
      if (detail !== 'auto' && detail !== 'low' && detail !== 'high') throw validation(`${at}.detail`, 'must be "auto", "low" or "high"');
      return { type: 'image_url', image_url: { url, detail } };
    }
    case 'refusal':
      throw validation(`${at}.type`, 'refusal parts are not supported in input');
    case 'input_file':
    case 'input_audio':
      throw validation(`${at}.type`, `${part.type} parts are not supported: text and images only`);
    default:
      throw validation(`${at}.type`, 'must be "input_text", "input_image" or "output_text"');
  }
}

/**
 * A function call the model made earlier: an assistant item of its own (so that it
 * lists as one input item); the history window joins consecutive calls into one turn.
 */
function addCall(drafts: InputDraft[], item: Record<string, unknown>, at: string): void {
  const call: ToolCall = {
    id: checkText(item.call_id, `${at}.call_id`, 200, 'line'),
    type: 'function',
    function: {
      name: checkText(item.name, `${at}.name`, 64, 'line'),
      arguments: checkText(item.arguments, `${at}.arguments`, MAX_CONTENT_CHARS),
    },
  };
  drafts.push({ role: 'assistant', content: '', payload: { tool_calls: [call] } });
}

function resultOf(item: Record<string, unknown>, at: string): InputDraft {
  const callId = checkText(item.call_id, `${at}.call_id`, 200, 'line');
  let output = item.output;
  // The newer shape: a list of input_text parts.
  if (Array.isArray(output))
    output = output
      .map((part, j) => {
        const p = part as { type?: unknown; text?: unknown } | null;
        if (p?.type !== 'input_text') throw validation(`${at}.output[${j}].type`, 'must be "input_text" (text results only)');
        return checkText(p.text, `${at}.output[${j}].text`, MAX_CONTENT_CHARS);
      })
      .join('\n');
  return { role: 'tool', content: checkText(output, `${at}.output`, MAX_CONTENT_CHARS), payload: { tool_call_id: callId } };
}

/** The caller's answer to an mcp_approval_request of the previous response (create.ts finds the request). */
function approvalOf(item: Record<string, unknown>, at: string): InputDraft {
  const requestId = checkText(item.approval_request_id, `${at}.approval_request_id`, 200, 'line');
  if (typeof item.approve !== 'boolean') throw validation(`${at}.approve`, 'must be a boolean');
  const reason = item.reason == null ? null : checkText(item.reason, `${at}.reason`, 4096);
  // No text: the model is told the outcome by the call's result, not by this item.
  return { role: 'user', content: '', payload: { mcp_approval: { approval_request_id: requestId, approve: item.approve, reason } } };
}
