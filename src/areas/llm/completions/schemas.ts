// POST /api/llm/v1/completions (OpenAI's legacy text completions) request and
// response shapes. Defaults and ceilings are chat/completions' (spec 2.5): max_tokens
// 1024 by default (OpenAI's legacy default is 16) up to 8192, temperature 0.7.
// `prompt`'s bounds are checked in the handler (prompt.ts), naming the item at fault.
import { Type, type Static } from '@fastify/type-provider-typebox';

export const DEFAULT_MAX_TOKENS = 1024;
export const MAX_TOKENS_CEILING = 8192;
export const DEFAULT_TEMPERATURE = 0.7;
export const MAX_PROMPTS = 128;
export const MAX_PROMPT_CHARS = 1_000_000;
/** Choices per request (prompts × n), as OpenAI bounds n. */
export const MAX_CHOICES = 128;

const StopText = Type.String({ minLength: 1, maxLength: 1000, text: 'verbatim' });

export const CompletionBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  // A string or an array of strings; token-id prompts are refused (prompt.ts).
  prompt: Type.Union([Type.String({ text: 'verbatim' }), Type.Array(Type.Unknown())]),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_CEILING })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHOICES })),
  stop: Type.Optional(Type.Union([StopText, Type.Array(StopText, { maxItems: 4 }), Type.Null()])),
  seed: Type.Optional(Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
  stream: Type.Optional(Type.Boolean()),
  stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) })),
  // Insertion (text after the completion) no engine behind the gateway offers through this surface: only null.
  suffix: Type.Optional(Type.Null()),
  echo: Type.Optional(Type.Boolean()),
  // The legacy form: how many most likely tokens per position (0-5); passed to `openai` nodes only.
  logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 5 }), Type.Null()])),
  presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  // Server-side best-of-n sampling is not offered: 1 (the default) only.
  best_of: Type.Optional(Type.Integer({ minimum: 1, maximum: 1 })),
  user: Type.Optional(Type.String({ maxLength: 512 })),
});
export type CompletionBody = Static<typeof CompletionBody>;

export const TextCompletion = Type.Object({
  id: Type.String(),
  object: Type.Literal('text_completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      text: Type.String(),
      index: Type.Integer(),
      // OpenAI's legacy logprobs object, as the engine gave it, or null.
      logprobs: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
      finish_reason: Type.String(),
    }),
  ),
  usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type TextCompletion = Static<typeof TextCompletion>;
