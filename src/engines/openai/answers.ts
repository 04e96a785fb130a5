// Reading an OpenAI-compatible chat answer past its text: tool calls (whole, or as
// streamed pieces), every choice of n, logprobs, finish reasons as reported, and the
// system fingerprint. The server is not ours: every value's shape is checked, and
// what is not what the protocol promises is left out rather than trusted.
import { randomUUID } from 'node:crypto';
import type { ChatBatch, ChatChunk, ChoiceResult, EngineUsage, FinishReason, ToolCall } from '../types.js';
import type { OpenAIChatCompletion, OpenAIChoice, OpenAIChunkChoice, OpenAIToolCall } from './protocol.js';

const FINISH_REASONS: ReadonlySet<unknown> = new Set<FinishReason>(['stop', 'length', 'tool_calls', 'content_filter']);
/** Past this many calls in one answer, pieces are dropped (the gateway accepts 128 tools). */
const MAX_CALLS = 128;
/** OpenAI's logprobs object nests 5 levels; anything deeper is not one (and could not be serialized safely). */
const MAX_LOGPROBS_DEPTH = 8;
const MAX_FINGERPRINT = 256;

/** A reason as the engine reported it; any other value (`eos`, a number…) is a stop. Absent: not finished yet. */
export function finishReasonOf(reason: unknown): FinishReason | undefined {
  if (reason === null || reason === undefined) return undefined;
  return FINISH_REASONS.has(reason) ? (reason as FinishReason) : 'stop';
}

export function fingerprintOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_FINGERPRINT ? value : undefined;
}

/** OpenAI's logprobs object of a choice or a piece, when that is what it is. */
function logprobsOf(value: unknown): object | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || deeperThan(value, MAX_LOGPROBS_DEPTH)) return undefined;
  return value;
}

function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (deeperThan(child, levels - 1)) return true;
  return false;
}

const newCallId = () => `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

/** Arguments are JSON text; an engine that sends them as an object gets them written as text. */
function argumentsOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return ''; // nested past what JSON.stringify can walk: not arguments
  }
}

function toolCallsOf(value: unknown): ToolCall[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const raw of value.slice(0, MAX_CALLS) as (OpenAIToolCall | null)[]) {
    const name = raw?.function?.name;
    if (typeof name !== 'string' || name === '') continue;
    const id = typeof raw!.id === 'string' && raw!.id !== '' ? raw!.id : newCallId();
    calls.push({ id, type: 'function', function: { name, arguments: argumentsOf(raw!.function!.arguments) } });
  }
  return calls.length > 0 ? calls : undefined;
}

function choiceOf(raw: OpenAIChoice | null): ChoiceResult {
  const message = raw?.message;
  const content = message?.content;
  const choice: ChoiceResult = {
    content: typeof content === 'string' ? content : '',
    finishReason: finishReasonOf(raw?.finish_reason) ?? 'stop',
  };
  const calls = toolCallsOf(message?.tool_calls);
  if (calls) choice.toolCalls = calls;
  const logprobs = logprobsOf(raw?.logprobs);
  if (logprobs) choice.logprobs = logprobs;
  return choice;
}

/**
 * The choices of a JSON answer, first one first (by their `index`, when every one
 * has a usable one), at most `n`; undefined when there is none.
 */
export function choicesOf(answer: OpenAIChatCompletion, n: number): ChoiceResult[] | undefined {
  const raw = answer.choices;
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  let listed = raw as (OpenAIChoice | null)[];
  if (listed.length > 1 && listed.every((c) => Number.isInteger(c?.index)))
    listed = [...listed].sort((a, b) => (a!.index as number) - (b!.index as number));
  return listed.slice(0, n).map(choiceOf);
}

/**
 * A stream's state across its frames: which choices and calls have been seen, each
 * choice's finish reason, the fingerprint. `read` turns one frame's choices into
 * chunks; `end` is the stream's last chunk.
 */
export class StreamedAnswer {
  private readonly reasons: FinishReason[] = [];
  /** `${choice}:${call}` of the calls whose first piece has gone out. */
  private readonly calls = new Set<string>();
  private fingerprint: string | undefined;

  /** `n`: the choices the request asked for; pieces of any other choice are dropped. */
  constructor(private readonly n: number) {}

  read(choices: unknown, systemFingerprint: unknown, batch: ChatBatch): void {
    if (systemFingerprint !== undefined) this.fingerprint = fingerprintOf(systemFingerprint) ?? this.fingerprint;
    if (!Array.isArray(choices)) return;
    for (const choice of choices as (OpenAIChunkChoice | null)[]) {
      const index = choice?.index ?? 0;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= this.n) continue;
      const i = index as number;
      const reason = finishReasonOf(choice!.finish_reason);
      if (reason !== undefined) this.reasons[i] = reason;
      const delta = choice!.delta;
      const content = delta?.content;
      const logprobs = choice!.logprobs == null ? undefined : logprobsOf(choice!.logprobs);
      if (i === 0 && logprobs === undefined) {
        // Plain text of the first choice: the chunk as it always was.
        if (typeof content === 'string' && content !== '') batch.push({ type: 'delta', content });
      } else if ((typeof content === 'string' && content !== '') || logprobs !== undefined) {
        const chunk: Extract<ChatChunk, { type: 'delta' }> = { type: 'delta', content: typeof content === 'string' ? content : '' };
        if (i > 0) chunk.choice = i;
        if (logprobs !== undefined) chunk.logprobs = logprobs;
        batch.push(chunk);
      }
      const pieces = delta?.tool_calls;
      if (Array.isArray(pieces)) this.readCalls(i, pieces as (OpenAIToolCall | null)[], batch);
    }
  }

  /** A call's first piece carries its id (the engine's, or one made here) and name; later pieces add arguments. */
  private readCalls(choice: number, pieces: (OpenAIToolCall | null)[], batch: ChatBatch): void {
    for (const piece of pieces) {
      const index = piece?.index ?? 0;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= MAX_CALLS) continue;
      const chunk: Extract<ChatChunk, { type: 'tool_call' }> = {
        type: 'tool_call',
        index: index as number,
        arguments: argumentsOf(piece!.function?.arguments),
      };
      if (choice > 0) chunk.choice = choice;
      const key = `${choice}:${index}`;
      if (!this.calls.has(key)) {
        const name = piece!.function?.name;
        // A piece before the name is known says nothing a client could use.
        if (typeof name !== 'string' || name === '') continue;
        this.calls.add(key);
        chunk.id = typeof piece!.id === 'string' && piece!.id !== '' ? piece!.id : newCallId();
        chunk.name = name;
      } else if (chunk.arguments === '') continue;
      batch.push(chunk);
    }
  }

  end(usage: EngineUsage): Extract<ChatChunk, { type: 'end' }> {
    const end: Extract<ChatChunk, { type: 'end' }> = { type: 'end', finishReason: this.reasons[0] ?? 'stop', usage };
    if (this.n > 1) end.finishReasons = Array.from({ length: Math.max(this.reasons.length, 1) }, (_, i) => this.reasons[i] ?? 'stop');
    if (this.fingerprint !== undefined) end.systemFingerprint = this.fingerprint;
    return end;
  }
}
