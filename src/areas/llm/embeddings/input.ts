// `input` of POST /embeddings as the engine gets it: texts, or token-id arrays
// (OpenAI's other form, which LangChain's Python OpenAIEmbeddings sends by default).
// Every refusal names the item at fault, as OpenAI's own 400s do.
import { validation } from '../../../platform/errors.js';
import { MAX_INPUT_CHARS, MAX_INPUT_TOKENS, MAX_INPUTS, type EmbeddingBody } from './schemas.js';

export type EmbeddingInput = { texts: string[] } | { tokens: number[][] };

const MAX_TOKEN_ID = 2 ** 31 - 1;

export function parseInput(input: EmbeddingBody['input']): EmbeddingInput {
  if (typeof input === 'string') return { texts: [text(input, 'input')] };
  if (input.length === 0) throw validation('input', 'must not be empty');
  // An array of numbers is one token-id input.
  if (input.every((item) => typeof item === 'number')) return { tokens: [tokenIds(input as number[], 'input')] };
  if (input.length > MAX_INPUTS) throw validation('input', `at most ${MAX_INPUTS} inputs per request`);
  if (input.every((item) => typeof item === 'string')) return { texts: input.map((item, i) => text(item as string, `input[${i}]`)) };
  if (input.every((item) => Array.isArray(item))) return { tokens: input.map((item, i) => tokenIds(item as number[], `input[${i}]`)) };
  throw validation('input', 'must be a string, an array of strings, an array of token ids or an array of token-id arrays, not a mix');
}

function text(value: string, field: string): string {
  if (value === '') throw validation(field, 'must not be an empty string');
  if (value.length > MAX_INPUT_CHARS) throw validation(field, `must be at most ${MAX_INPUT_CHARS} characters`);
  return value;
}

function tokenIds(ids: number[], field: string): number[] {
  if (ids.length === 0) throw validation(field, 'must not be an empty token array');
  if (ids.length > MAX_INPUT_TOKENS) throw validation(field, `must be at most ${MAX_INPUT_TOKENS} tokens`);
  for (const id of ids) if (id < 0 || id > MAX_TOKEN_ID) throw validation(field, 'token ids must be integers from 0 to 2147483647');
  return ids;
}
