// Token counts for usage records when an engine reports none (some OpenAI-compatible
// servers, Ollama builds without eval counts, streams cut short). A real BPE
// tokenizer (o200k_base, as OpenAI's current models use) rather than a word
// count: close to what a modern engine's own tokenizer reports, never a guess.
//
// The tokenizer's tables take ~150 ms and ~60 MB to load, so they are loaded on
// first need only: a gateway whose engines report usage never pays for them.
import type { ChatMessage, EngineUsage } from '../../../engines/types.js';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

let loading: Promise<Encoding> | undefined;
const encoding = () => (loading ??= import('gpt-tokenizer/encoding/o200k_base'));

// Text that looks like a special token (`<|endoftext|>`) in a prompt is counted as
// the ordinary text it is; the tokenizer would otherwise refuse it.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

// OpenAI's documented chat accounting: each message costs its role and content plus
// 3 tokens of framing, and the reply is primed with 3 more.
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export async function countTextTokens(text: string): Promise<number> {
  if (text === '') return 0;
  return (await encoding()).countTokens(text, AS_TEXT);
}

export async function countPromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  const { countTokens } = await encoding();
  let total = REPLY_PRIMING;
  for (const message of messages) total += PER_MESSAGE + countTokens(message.role, AS_TEXT) + countTokens(message.content, AS_TEXT);
  return total;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** The engine's counts where it gave them; the tokenizer's for whatever it left out. */
export async function completeUsage(reported: EngineUsage | undefined, messages: readonly ChatMessage[], completion: string): Promise<TokenUsage> {
  return {
    promptTokens: reported?.promptTokens ?? (await countPromptTokens(messages)),
    completionTokens: reported?.completionTokens ?? (await countTextTokens(completion)),
  };
}
