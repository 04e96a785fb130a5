// Token counts for usage records when an engine reports none (some OpenAI-compatible
// servers, Ollama builds without eval counts, streams cut short). A real BPE
// tokenizer (o200k_base, as OpenAI's current models use) rather than a word
// count: close to what a modern engine's own tokenizer reports, never a guess.
//
// The tokenizer's tables take ~180 ms and ~60 MB to load, stalling the event loop
// for ~100 ms: they are loaded when a gateway first serves chat (preloadTokenizer),
// not at import, so processes that never chat (CLI commands, most tests) never pay.
//
// BPE is quadratic in the length of one word: 100,000 letters without a space take
// seconds. Text is therefore counted in segments of at most SEGMENT characters (cut
// before a space where there is one, so ordinary text counts exactly as a whole),
// yielding to the event loop between batches: a huge prompt costs CPU, never a
// stall of every other request.
import { textOf, type ChatMessage, type ChatResult, type EngineUsage, type ToolCall } from '../../../engines/types.js';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

let loading: Promise<Encoding> | undefined;
const encoding = () => (loading ??= import('gpt-tokenizer/encoding/o200k_base'));

/**
 * Loads the tokenizer in the background. Counting is needed whenever an engine reports
 * no usage or a client leaves early, which can first happen at any moment of traffic;
 * loading it up front moves the stall to a moment the caller chooses.
 */
export function preloadTokenizer(): void {
  void encoding();
}

// Text that looks like a special token (`<|endoftext|>`) in a prompt is counted as
// the ordinary text it is; the tokenizer would otherwise refuse it.
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const SEGMENT = 1024;
const SEGMENTS_PER_TURN = 8;

// OpenAI's documented chat accounting: each message costs its role and content plus
// 3 tokens of framing, and the reply is primed with 3 more.
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export async function countTextTokens(text: string): Promise<number> {
  if (text === '') return 0;
  const { countTokens } = await encoding();
  if (text.length <= SEGMENT) return countTokens(text, AS_TEXT);
  let total = 0;
  let segments = 0;
  for (let start = 0; start < text.length; ) {
    const end = segmentEnd(text, start);
    total += countTokens(text.slice(start, end), AS_TEXT);
    start = end;
    if (++segments % SEGMENTS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return total;
}

function segmentEnd(text: string, start: number): number {
  let end = start + SEGMENT;
  if (end >= text.length) return text.length;
  const space = text.lastIndexOf(' ', end);
  if (space > start) return space;
  // No space to cut at: never split a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return end;
}

export async function countPromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + (await countTextTokens(message.role)) + (await countTextTokens(textOf(message.content)));
    // An assistant turn that called tools: the calls were its text.
    if (message.tool_calls) total += await countTextTokens(callsText(message.tool_calls));
  }
  return total;
}

/** Tool calls as the text they cost: each call's name and arguments. */
function callsText(calls: readonly ToolCall[]): string {
  let text = '';
  for (const call of calls) text += `${text === '' ? '' : '\n'}${call.function.name} ${call.function.arguments}`;
  return text;
}

/**
 * What a JSON answer generated, as text to count when the engine reports no usage:
 * every choice's text and the tool calls it made (name and arguments).
 */
export function generatedText(result: ChatResult): string {
  if (result.toolCalls === undefined && result.moreChoices === undefined) return result.content;
  const parts: string[] = [];
  for (const choice of [result, ...(result.moreChoices ?? [])]) {
    if (choice.content !== '') parts.push(choice.content);
    if (choice.toolCalls && choice.toolCalls.length > 0) parts.push(callsText(choice.toolCalls));
  }
  return parts.join('\n');
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * A streamed answer kept for counting in case the engine reports no usage. Text
 * beyond KEEP_CHARS is counted as it arrives and let go, so an engine streaming
 * enormous "tokens" cannot make the gateway hold its whole output.
 */
export class StreamedText {
  private static readonly KEEP_CHARS = 256 * 1024;
  private parts: string[] = [];
  private kept = 0;
  private counted: Promise<number> = Promise.resolve(0);

  add(content: string): void {
    this.parts.push(content);
    this.kept += content.length;
    if (this.kept < StreamedText.KEEP_CHARS) return;
    const text = this.parts.join('');
    // Cut before the last space so no word is split between two counts.
    const cut = text.lastIndexOf(' ');
    const head = cut > 0 ? text.slice(0, cut) : text;
    const tail = cut > 0 ? text.slice(cut) : '';
    this.parts = tail ? [tail] : [];
    this.kept = tail.length;
    const previous = this.counted;
    this.counted = previous.then(async (n) => n + (await countTextTokens(head)));
  }

  async tokens(): Promise<number> {
    const rest = this.parts.join('');
    return (await this.counted) + (await countTextTokens(rest));
  }
}

// Engines are untrusted: a reported count is used only when it is one, a whole number
// that the usage table's integer columns hold. Anything else (1.5, -2, 3e10) is counted
// here instead: it must reach neither an answer nor the usage queue, where one row the
// database refuses would hold back every record behind it.
const MAX_COUNT = 2 ** 31 - 1;
const isCount = (n: number | undefined): n is number => Number.isInteger(n) && n! >= 0 && n! <= MAX_COUNT;

/** The engine's counts where it gave real ones; the tokenizer's for whatever it left out. */
export async function completeUsage(
  reported: EngineUsage | undefined,
  messages: readonly ChatMessage[],
  completion: string | StreamedText,
): Promise<TokenUsage> {
  const prompt = reported?.promptTokens;
  const generated = reported?.completionTokens;
  return {
    promptTokens: isCount(prompt) ? prompt : await countPromptTokens(messages),
    completionTokens: isCount(generated)
      ? generated
      : typeof completion === 'string'
        ? await countTextTokens(completion)
        : await completion.tokens(),
  };
}
