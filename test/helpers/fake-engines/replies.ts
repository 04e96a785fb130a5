// What both fakes answer with, whatever the protocol: the model list, the reply's
// tokens and their counts, and deterministic embeddings.
import { createHash } from 'node:crypto';
import type { FakeBehaviour } from './types.js';

const DEFAULT_MODELS = ['fake-small', 'fake-large'];
const EMBEDDING_DIMENSIONS = 16;

export function modelsOf(b: FakeBehaviour): string[] {
  return b.models ?? DEFAULT_MODELS;
}

export function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

export function promptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return messages.reduce((sum: number, m: any) => sum + (typeof m?.content === 'string' ? wordCount(m.content) : 0), 0);
}

/** The default answer: the knob's reply, or an echo of the last user message. */
export function replyText(b: FakeBehaviour, messages: unknown): string {
  const lastUser = Array.isArray(messages) ? [...messages].reverse().find((m: any) => m?.role === 'user') : undefined;
  return (
    b.reply ?? `Fake answer to: ${typeof lastUser?.content === 'string' && lastUser.content.trim() ? lastUser.content.trim() : '(nothing)'}`
  );
}

/** The answer as tokens: each word with its leading whitespace; `repeat` copies joined by a space. `text` replaces the default answer. */
export function replyTokens(
  b: FakeBehaviour,
  messages: unknown,
  limit: number | undefined,
  text?: string,
): { tokens: string[]; finishReason: 'stop' | 'length' } {
  const reply = text ?? replyText(b, messages);
  const once = reply.match(/\s*\S+/g) ?? [];
  const repeat = Math.max(1, b.repeat ?? 1);
  const total = once.length * repeat;
  const max = limit !== undefined && limit >= 0 && limit < total ? limit : total;
  const tokens: string[] = new Array(max);
  for (let i = 0; i < max; i++) {
    const token = once[i % once.length]!;
    tokens[i] = i >= once.length && i % once.length === 0 && !/^\s/.test(token) ? ` ${token}` : token;
  }
  return { tokens, finishReason: max < total ? 'length' : 'stop' };
}

/** Deterministic unit vector derived from the text. */
export function embeddingOf(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const v = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => digest.readUInt16BE(i * 2) / 65535 - 0.5);
  const norm = Math.hypot(...v) || 1;
  return v.map((n) => n / norm);
}

export function inputsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((s) => typeof s === 'string')) return input as string[];
  return undefined;
}

/**
 * A value a JSON schema accepts, built the simplest way: an object of its required
 * properties, the first enum value, "fake" for strings, 1 for numbers, true for booleans.
 */
export function schemaSample(schema: any, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 16) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'string') return 'fake';
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  if (type === 'array') return [];
  if (type === 'object' || typeof schema.properties === 'object') {
    const value: Record<string, unknown> = {};
    const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
    for (const name of required) if (typeof name === 'string') value[name] = schemaSample(schema.properties?.[name], depth + 1);
    return value;
  }
  return null;
}

/** OpenAI's logprobs entry of one token, with `top` alternatives (the token itself first). */
export function tokenLogprob(token: string, position: number, top: number): object {
  const bytes = (text: string) => [...Buffer.from(text, 'utf8')];
  const logprob = -0.01 * (position + 1);
  const alternatives = Array.from({ length: top }, (_, k) => {
    const alt = k === 0 ? token : `${token.trim()}_${k}`;
    return { token: alt, logprob: logprob - k, bytes: bytes(alt) };
  });
  return { token, logprob, bytes: bytes(token), top_logprobs: alternatives };
}
