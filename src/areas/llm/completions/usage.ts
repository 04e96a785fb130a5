// Token counts for a completions usage record: the engine's where it gave real ones,
// the gateway's tokenizer (o200k_base) for the rest.
import type { EngineUsage } from '../../../engines/types.js';
import { countTextTokens, type StreamedText, type TokenUsage } from '../tokens/count.js';

// Engines are untrusted: a count is used only when it is a whole number the usage table holds.
const isCount = (n: number | undefined): n is number => Number.isInteger(n) && n! >= 0 && n! <= 2 ** 31 - 1;

export async function promptTokensOf(prompts: readonly string[]): Promise<number> {
  let total = 0;
  for (const prompt of prompts) total += await countTextTokens(prompt);
  return total;
}

export async function usageOf(
  reported: EngineUsage | undefined,
  prompts: readonly string[],
  text: string | StreamedText,
): Promise<TokenUsage> {
  const prompt = reported?.promptTokens;
  const generated = reported?.completionTokens;
  return {
    promptTokens: isCount(prompt) ? prompt : await promptTokensOf(prompts),
    completionTokens: isCount(generated) ? generated : typeof text === 'string' ? await countTextTokens(text) : await text.tokens(),
  };
}
