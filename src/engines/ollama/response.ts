// How Ollama's /api/chat answers (one JSON answer or NDJSON frames) read back as
// OpenAI's shapes: tool calls with JSON-text arguments and ids, logprobs, finish
// reasons and usage. The engine is not trusted: what does not have the documented
// shape is refused (`undefined` below), never passed on as it came.
import { randomBytes } from 'node:crypto';
import type { EngineUsage, FinishReason, ToolCall } from '../types.js';
import type { OllamaChatFrame, OllamaLogprob } from './protocol.js';

/** Ids Ollama generates (`call_` + 8 characters, since 0.12.10) pass; anything else is replaced. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function callId(raw: unknown): string {
  return typeof raw === 'string' && SAFE_ID.test(raw) ? raw : `call_${randomBytes(12).toString('hex')}`;
}

/**
 * The calls of one answer or frame: `[]` when there are none, `undefined` when they are
 * malformed. Ollama writes arguments as an object; OpenAI's clients read JSON text.
 */
export function toolCallsOf(frame: OllamaChatFrame): ToolCall[] | undefined {
  const raw = frame.message?.tool_calls;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return undefined;
  const calls: ToolCall[] = [];
  for (const entry of raw) {
    const fn = (entry as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof fn?.name !== 'string' || fn.name === '') return undefined;
    const args = fn.arguments;
    let text: string;
    if (args === undefined || args === null) text = '{}';
    else if (typeof args === 'object' && !Array.isArray(args)) text = JSON.stringify(args);
    else return undefined;
    calls.push({ id: callId((entry as { id?: unknown }).id), type: 'function', function: { name: fn.name, arguments: text } });
  }
  return calls;
}

/** OpenAI's per-token logprob entry. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

function tokenOf(raw: unknown): { token: string; logprob: number; bytes: number[] | null } | undefined {
  const entry = raw as OllamaLogprob | null;
  if (typeof entry?.token !== 'string' || typeof entry.logprob !== 'number' || !Number.isFinite(entry.logprob)) return undefined;
  const bytes = entry.bytes;
  if (bytes === undefined || bytes === null) return { token: entry.token, logprob: entry.logprob, bytes: null };
  if (!Array.isArray(bytes) || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return undefined;
  return { token: entry.token, logprob: entry.logprob, bytes: bytes as number[] };
}

/**
 * A frame's `logprobs` (Ollama 0.12.11+: OpenAI's per-token entries, as a bare array)
 * in OpenAI's shape; `undefined` when there are none or they are malformed (they are
 * an extra: a bad list is left out rather than failing the answer).
 */
export function logprobsOf(raw: unknown): TokenLogprob[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const out: TokenLogprob[] = [];
  for (const item of raw) {
    const token = tokenOf(item);
    if (token === undefined) return undefined;
    const top = (item as OllamaLogprob).top_logprobs;
    const alternatives: TokenLogprob['top_logprobs'] = [];
    if (Array.isArray(top)) {
      for (const alt of top) {
        const t = tokenOf(alt);
        if (t === undefined) return undefined;
        alternatives.push(t);
      }
    } else if (top !== undefined && top !== null) return undefined;
    out.push({ ...token, top_logprobs: alternatives });
  }
  return out;
}

/** The choice's `logprobs` object, as OpenAI frames it. */
export function choiceLogprobs(content: TokenLogprob[]): { content: TokenLogprob[]; refusal: null } {
  return { content, refusal: null };
}

/**
 * Ollama says `stop` after a turn that called tools (its own OpenAI layer says
 * `tool_calls` then, as OpenAI does); `length` stays `length`.
 */
export function finishReasonOf(frame: OllamaChatFrame, calledTools: boolean): FinishReason {
  if (frame.done_reason === 'length') return 'length';
  return calledTools ? 'tool_calls' : 'stop';
}

export function usageOf(frame: OllamaChatFrame): EngineUsage {
  return {
    ...(typeof frame.prompt_eval_count === 'number' ? { promptTokens: frame.prompt_eval_count } : {}),
    ...(typeof frame.eval_count === 'number' ? { completionTokens: frame.eval_count } : {}),
  };
}
