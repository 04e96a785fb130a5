// What the model sees of a long conversation: the system prompt, then as many of the
// newest turns as fit the token budget, oldest dropped first. The system prompt and
// the newest turn are always kept, even when they alone exceed the budget (the engine
// then answers or refuses as it does for any long prompt). Items are read newest
// first in pages, so a conversation of thousands of turns costs only what fits.
import type { ChatMessage } from '../../../engines/types.js';
import type { Queryable } from '../../../platform/db/database.js';
import { countTextTokens } from '../tokens/count.js';
import { itemRepository, type ItemRow } from './repository.js';

// Per message, on top of its text: the role and the chat template's separators.
export const MESSAGE_OVERHEAD_TOKENS = 4;
const PAGE = 64;

export interface HistoryWindow {
  /** The assistant's instructions (threads) or none; always kept, first. */
  system?: string;
  /** Tokens the history may take: the model's context less the answer's max_tokens and room kept for sources. */
  budgetTokens: number;
}

/**
 * The conversation's messages for the engine, oldest first. Items still being written
 * are left out; a turn cut short is kept with what it had (the model sees what it said);
 * an empty one is left out.
 */
export async function windowOf(q: Queryable, tenantId: string, conversationId: string, window: HistoryWindow): Promise<ChatMessage[]> {
  let left = window.budgetTokens;
  if (window.system) left -= (await countTextTokens(window.system)) + MESSAGE_OVERHEAD_TOKENS;
  const kept: ChatMessage[] = [];
  let before: number | undefined;
  for (;;) {
    const rows = await itemRepository.newest(q, tenantId, conversationId, PAGE, before);
    for (const row of rows) {
      const calls = row.payload?.tool_calls;
      if (row.content === '' && !calls?.length) continue;
      const cost = (await countTextTokens(calls ? row.content + JSON.stringify(calls) : row.content)) + MESSAGE_OVERHEAD_TOKENS;
      // The newest turn always goes in; older ones only while they fit.
      if (kept.length > 0 && cost > left) return finish(window, kept);
      kept.push(messageOf(row));
      left -= cost;
    }
    if (rows.length < PAGE) return finish(window, kept);
    before = rows[rows.length - 1]!.position;
  }
}

function finish(window: HistoryWindow, newestFirst: ChatMessage[]): ChatMessage[] {
  const messages = newestFirst.reverse();
  // A tool result whose call was trimmed away means nothing to the model (and engines refuse it).
  while (messages.length > 1 && messages[0]!.role === 'tool') messages.shift();
  joinCalls(messages);
  return window.system ? [{ role: 'system', content: window.system }, ...messages] : messages;
}

/** Consecutive assistant turns that only call functions (stored one call each) become one turn, as engines expect before the results. */
function joinCalls(messages: ChatMessage[]): void {
  for (let i = messages.length - 1; i > 0; i--) {
    const [before, current] = [messages[i - 1]!, messages[i]!];
    if (current.role !== 'assistant' || current.content !== null || before.role !== 'assistant' || !before.tool_calls) continue;
    if (before.content === null || before.content === '') {
      before.tool_calls = [...before.tool_calls, ...(current.tool_calls ?? [])];
      messages.splice(i, 1);
    }
  }
}

/** The item as the engine takes it: its parts, calls or call id when it has them (the Responses API's items). */
function messageOf(row: ItemRow): ChatMessage {
  const payload = row.payload;
  if (!payload) return { role: row.role, content: row.content };
  return {
    role: row.role,
    content: payload.parts ?? (payload.tool_calls && row.content === '' ? null : row.content),
    ...(payload.tool_calls ? { tool_calls: payload.tool_calls } : {}),
    ...(payload.tool_call_id ? { tool_call_id: payload.tool_call_id } : {}),
  };
}
