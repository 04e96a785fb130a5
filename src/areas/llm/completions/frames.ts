// What POST /completions sends: the JSON answer and the event-stream frames, in
// OpenAI's legacy `text_completion` shape (no rag metadata frame on this surface).
import { randomUUID } from 'node:crypto';
import type { CompletionChoice, FinishReason } from '../../../engines/types.js';
import type { TokenUsage } from '../tokens/count.js';
import type { TextCompletion } from './schemas.js';

export interface Completion {
  id: string;
  created: number;
  model: string;
}

export function newCompletion(model: string): Completion {
  return { id: `cmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export const usageOf = (usage: TokenUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

const logprobsOf = (logprobs: unknown) =>
  typeof logprobs === 'object' && logprobs !== null && !Array.isArray(logprobs) ? (logprobs as Record<string, unknown>) : null;

export function completionBody(c: Completion, choices: CompletionChoice[], usage: TokenUsage): TextCompletion {
  return {
    id: c.id,
    object: 'text_completion',
    created: c.created,
    model: c.model,
    choices: choices.map((choice, index) => ({
      text: choice.text,
      index,
      logprobs: logprobsOf(choice.logprobs),
      finish_reason: choice.finishReason,
    })),
    usage: usageOf(usage),
  };
}

/** One streamed piece of a choice's text, or (with its reason) the choice's last, empty frame. */
export function chunkFrame(c: Completion, index: number, text: string, finishReason: FinishReason | null, logprobs?: unknown) {
  return {
    id: c.id,
    object: 'text_completion',
    created: c.created,
    model: c.model,
    choices: [{ text, index, logprobs: logprobsOf(logprobs), finish_reason: finishReason }],
  };
}

/** Before [DONE], only when asked for with stream_options.include_usage. */
export function usageFrame(c: Completion, usage: TokenUsage) {
  return { id: c.id, object: 'text_completion', created: c.created, model: c.model, choices: [], usage: usageOf(usage) };
}

/** A failure after the first byte, in band (OpenAI's error object, which the SDK raises), then [DONE]. */
export function errorFrame(message: string, code: 'engine_error' | 'server_shutting_down' = 'engine_error') {
  return { error: { message, type: 'server_error', code } };
}
