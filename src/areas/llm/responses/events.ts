// OpenAI's Responses stream events, in the order OpenAI sends them: every event an
// `event: <type>` line and a `data:` line holding `type` and `sequence_number`
// (counted from 0), without a closing `[DONE]` (OpenAI sends none on this API).
//
//   response.created, response.in_progress,
//   per output item: response.output_item.added,
//     a message: response.content_part.added, response.output_text.delta…,
//       response.output_text.done, response.content_part.done;
//     a function call: response.function_call_arguments.delta…, response.function_call_arguments.done;
//   response.output_item.done;
//   then response.completed, response.incomplete or response.failed (with the response).
//
// A response that runs MCP tools (mcp-run.ts) has a turn of the model per step: each
// turn's message and function calls are closed with closeTurn, and the platform's own
// items come between them (mcpItem: output_item.added, the item's own events such as
// response.mcp_call.in_progress / .completed, output_item.done). The model's calls of
// MCP tools are not streamed as function calls: they become mcp_call items.
import type { ToolCall } from '../../../engines/types.js';
import type { ItemRow } from '../history/repository.js';
import { storedMcp } from './mcp-items.js';
import { callItem, callItemId, messageItem, outputText, snippetsOf } from './objects.js';
import type { OutputItem, ResponseObject } from './schemas.js';

type Frame = Record<string, unknown>;
/** An item's own event: its type and what it carries beyond item_id and output_index. */
export type ItemEvent = [type: string, extra?: Frame];

/** The events of one response, numbered as they are made; each call returns the frames' text. */
export class ResponseEvents {
  private seq = 0;
  private next = 0;
  private message: { index: number; text: string } | undefined;
  private readonly calls = new Map<number, { index: number; call: ToolCall }>();
  /** Pieces (by call index) of calls to MCP tools in this turn: not streamed as function calls. */
  private readonly skipped = new Set<number>();

  /** `isMcpTool`: whether a function name the model calls is an MCP tool the platform runs. */
  constructor(
    private messageId: string,
    private readonly isMcpTool: (name: string) => boolean = () => false,
  ) {}

  /** The model's next turn (an MCP step) answers into another item; numbering goes on. */
  nextTurn(messageId: string): void {
    this.messageId = messageId;
    this.message = undefined;
    this.calls.clear();
    this.skipped.clear();
  }

  /** One platform-made item at once: see openItem and closeItem. */
  mcpItem(added: OutputItem, between: ItemEvent[], done: OutputItem): string {
    const [out, index] = this.openItem(added, between);
    return out + this.closeItem(index, done, []);
  }

  /** output_item.added (as `added`) and the item's first events; returns the frames and the item's output_index. */
  openItem(added: OutputItem, events: ItemEvent[]): [string, number] {
    const index = this.next++;
    let out = this.frame('response.output_item.added', { output_index: index, item: added });
    for (const [type, extra] of events) out += this.frame(type, { item_id: added.id, output_index: index, ...extra });
    return [out, index];
  }

  /** The item's last events, then output_item.done (as `done`). */
  closeItem(index: number, done: OutputItem, events: ItemEvent[]): string {
    let out = '';
    for (const [type, extra] of events) out += this.frame(type, { item_id: done.id, output_index: index, ...extra });
    return out + this.frame('response.output_item.done', { output_index: index, item: done });
  }

  /** The closing event alone, when the last turn's items are closed already. */
  close(response: ResponseObject): string {
    const type =
      response.status === 'completed' ? 'response.completed' : response.status === 'failed' ? 'response.failed' : 'response.incomplete';
    return this.frame(type, { response });
  }

  start(response: ResponseObject): string {
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  delta(text: string): string {
    let out = '';
    if (!this.message) out += this.openMessage();
    this.message!.text += text;
    return out + this.frame('response.output_text.delta', { ...this.at(this.message!.index), content_index: 0, delta: text, logprobs: [] });
  }

  /** A piece of a function call: its first piece opens the call's item. */
  toolCall(piece: { index: number; id?: string; name?: string; arguments: string }): string {
    let out = '';
    if (this.skipped.has(piece.index) || (!this.calls.has(piece.index) && this.isMcpTool(piece.name ?? ''))) {
      this.skipped.add(piece.index);
      return '';
    }
    let open = this.calls.get(piece.index);
    if (!open) {
      const call: ToolCall = { id: piece.id ?? '', type: 'function', function: { name: piece.name ?? '', arguments: '' } };
      open = { index: this.next++, call };
      this.calls.set(piece.index, open);
      out += this.frame('response.output_item.added', {
        output_index: open.index,
        item: callItem(this.messageId, piece.index, call, 'in_progress'),
      });
    }
    if (piece.arguments === '') return out;
    open.call.function.arguments += piece.arguments;
    return (
      out +
      this.frame('response.function_call_arguments.delta', {
        item_id: callItemId(this.messageId, piece.index),
        output_index: open.index,
        delta: piece.arguments,
      })
    );
  }

  /**
   * Closes every open item as the stored one says (its final text, status and calls),
   * then the closing event: `response.completed`, `.incomplete` or `.failed`.
   */
  finish(item: ItemRow | undefined, response: ResponseObject): string {
    return this.closeTurn(item, true) + this.close(response);
  }

  /**
   * Closes the turn's open items as the stored one says (its final text, status and
   * calls). `last`: the response's last turn, whose message is shown even when empty
   * (unless it made MCP items).
   */
  closeTurn(item: ItemRow | undefined, last: boolean): string {
    let out = '';
    const mcp = storedMcp(item);
    const mcpCalls = new Set(mcp.flatMap((s) => (s.call_id ? [s.call_id] : [])));
    const calls = (item?.payload?.tool_calls ?? []).map((call, i) => ({ call, i })).filter(({ call }) => !mcpCalls.has(call.id));
    const text = item?.content ?? this.message?.text ?? '';
    const status = item && item.status !== 'in_progress' ? item.status : 'incomplete';
    // An answer with nothing at all still has its (empty) message, as the response object shows it.
    if (!this.message && (text !== '' || (last && calls.length === 0 && mcp.length === 0))) out += this.openMessage();
    if (this.message) {
      const at = this.at(this.message.index);
      out += this.frame('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] });
      const snippets = snippetsOf(item);
      out += this.frame('response.content_part.done', { ...at, content_index: 0, part: outputText(text, snippets) });
      out += this.frame('response.output_item.done', {
        output_index: this.message.index,
        item: messageItem(this.messageId, text, status, snippets),
      });
    }
    calls.forEach(({ call, i }) => {
      const open = this.calls.get(i) ?? { index: this.next++, call };
      if (!this.calls.has(i))
        out += this.frame('response.output_item.added', {
          output_index: open.index,
          item: callItem(this.messageId, i, call, 'in_progress'),
        });
      const id = callItemId(this.messageId, i);
      out += this.frame('response.function_call_arguments.done', {
        item_id: id,
        output_index: open.index,
        name: call.function.name,
        arguments: call.function.arguments,
      });
      out += this.frame('response.output_item.done', { output_index: open.index, item: callItem(this.messageId, i, call, 'completed') });
    });
    return out;
  }

  private openMessage(): string {
    this.message = { index: this.next++, text: '' };
    const at = this.at(this.message.index);
    return (
      this.frame('response.output_item.added', {
        output_index: this.message.index,
        item: { ...messageItem(this.messageId, '', 'in_progress'), content: [] },
      }) + this.frame('response.content_part.added', { ...at, content_index: 0, part: outputText('') })
    );
  }

  private at(index: number) {
    return { item_id: this.messageId, output_index: index };
  }

  private frame(type: string, data: Frame): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: this.seq++ })}\n\n`;
  }
}
