// What chat/completions sends: the JSON answer (spec 2.6) and the event-stream
// frames (spec 6.1), built in one place so both paths agree on every field.
import { randomUUID } from 'node:crypto';
import type { ChatResult, ChoiceResult, FinishReason } from '../../../engines/types.js';
import type { TokenUsage } from '../tokens/count.js';
import type { Grounding } from '../grounding/ground.js';
import type { ChatCompletion } from './schemas.js';

/** What every answer to one request shares. */
export interface Completion {
  id: string;
  /** Unix seconds. */
  created: number;
  /** The model actually used. */
  model: string;
}

export function newCompletion(model: string): Completion {
  // randomUUID draws from a cached entropy pool: far cheaper per request than randomBytes.
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

const usageOf = (usage: TokenUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

/**
 * The JSON answer: every choice the engine generated, each with its tool calls (content
 * null when the model only called tools, as OpenAI answers), its logprobs when the
 * request asked for them, and its finish reason as the engine reported it.
 */
export function completionBody(
  c: Completion,
  result: ChatResult,
  usage: TokenUsage,
  grounding: Grounding,
  logprobs = false,
): ChatCompletion {
  const choices = [choiceOf(0, result, logprobs)];
  const more = result.moreChoices;
  if (more) for (let i = 0; i < more.length; i++) choices.push(choiceOf(i + 1, more[i]!, logprobs));
  const body: ChatCompletion = {
    id: c.id,
    object: 'chat.completion',
    created: c.created,
    model: c.model,
    choices,
    usage: usageOf(usage),
    rag_snippets: grounding.snippets,
    rag_active: grounding.active,
    rag_status: grounding.status,
  };
  if (result.systemFingerprint !== undefined) body.system_fingerprint = result.systemFingerprint;
  return body;
}

function choiceOf(index: number, r: ChoiceResult, logprobs: boolean): ChatCompletion['choices'][number] {
  const message: ChatCompletion['choices'][number]['message'] =
    r.toolCalls && r.toolCalls.length > 0
      ? { role: 'assistant', content: r.content === '' ? null : r.content, tool_calls: r.toolCalls }
      : { role: 'assistant', content: r.content };
  return logprobs
    ? { index, message, logprobs: r.logprobs ?? null, finish_reason: r.finishReason }
    : { index, message, finish_reason: r.finishReason };
}

const metadataFields = (g: Grounding) => ({
  object: 'rag_metadata',
  active: g.active,
  status: g.status,
  snippet_count: g.snippets?.length ?? 0,
  rag_snippets: g.snippets,
});
// An ungrounded stream's metadata, as JSON text serialized once: most streams send one of these two.
const UNGROUNDED_FIELDS = metadataFields({ snippets: null, active: false, status: 'inactive' });
const UNGROUNDED_METADATA = JSON.stringify(UNGROUNDED_FIELDS);
const UNGROUNDED_METADATA_WITH_CHOICES = JSON.stringify({ ...UNGROUNDED_FIELDS, choices: [] });

/**
 * Frame 1, as JSON text. The spec's shape has no `choices`; `withChoices` (the tenant's
 * streamMetadataChoices or the request's stream_options.metadata_choices) adds an
 * empty one for clients that read `chunk.choices` on every frame (the openai SDK).
 */
export function metadataFrame(withChoices: boolean, grounding: Grounding, extra?: Record<string, string>): string {
  if (grounding.status === 'inactive' && !extra) return withChoices ? UNGROUNDED_METADATA_WITH_CHOICES : UNGROUNDED_METADATA;
  // `extra`: fields of a surface built on these frames (the persisted chat's conversationId, messageId).
  const fields = { ...metadataFields(grounding), ...extra };
  return JSON.stringify(withChoices ? { ...fields, choices: [] } : fields);
}

/**
 * Frames 2..n: generated text, as JSON text. Sent once per token, so the parts that
 * never change within a stream are serialized once; the first frame carries the role.
 * Plain text of the first choice (json) is the path every token of most streams takes;
 * the rest (other choices, logprobs, tool-call pieces) is built per frame (other).
 */
export class DeltaFrames {
  private readonly head: string;

  constructor(private readonly c: Completion) {
    this.head = `{"id":${JSON.stringify(c.id)},"object":"chat.completion.chunk","created":${c.created},"model":${JSON.stringify(c.model)},"choices":[{"index":0,"delta":{`;
  }

  json(content: string, first: boolean): string {
    return `${this.head}${first ? '"role":"assistant",' : ''}"content":${JSON.stringify(content)}},"finish_reason":null}]}`;
  }

  /** A frame of choice `index` with any delta; `logprobs` (OpenAI's object for the piece) when the engine gave them. */
  other(index: number, delta: object, logprobs?: unknown): string {
    const { id, created, model } = this.c;
    const choice = logprobs === undefined ? { index, delta, finish_reason: null } : { index, delta, logprobs, finish_reason: null };
    return JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [choice] });
  }

  /**
   * A tool call's piece, framed as OpenAI frames it: the first piece of a call has its
   * id, type and name (and the choice's role when nothing of it went before), later
   * pieces only add to the arguments.
   */
  toolCall(index: number, firstOfChoice: boolean, call: { index: number; id?: string; name?: string; arguments: string }): string {
    const piece =
      call.id !== undefined || call.name !== undefined
        ? { index: call.index, id: call.id ?? '', type: 'function', function: { name: call.name ?? '', arguments: call.arguments } }
        : { index: call.index, function: { arguments: call.arguments } };
    return this.other(index, firstOfChoice ? { role: 'assistant', content: null, tool_calls: [piece] } : { tool_calls: [piece] });
  }
}

/**
 * Frame n+1 (one per choice): empty content with the finish reason as the engine
 * reported it (`stop`, `length`, `tool_calls`, `content_filter`). It carries the role
 * too when the choice produced nothing at all, so every choice names its role once,
 * and the engine's system_fingerprint when it gave one.
 */
export function finalFrame(c: Completion, finishReason: FinishReason, first: boolean, index = 0, systemFingerprint?: string) {
  const frame = {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model: c.model,
    choices: [{ index, delta: first ? { role: 'assistant', content: '' } : { content: '' }, finish_reason: finishReason }],
  };
  return systemFingerprint === undefined ? frame : { ...frame, system_fingerprint: systemFingerprint };
}

/** Sent before [DONE] only when the request asked with stream_options.include_usage (OpenAI's convention). */
export function usageFrame(c: Completion, usage: TokenUsage) {
  return { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, choices: [], usage: usageOf(usage) };
}

/**
 * A failure after the first byte (the engine's, or the server shutting down): nothing
 * can be retried or turned into an HTTP status any more, so the stream says so in band
 * and then ends with [DONE]. `type`/`code` follow OpenAI's error object, which the
 * openai SDK raises as an APIError.
 */
export function errorFrame(message: string, code: 'engine_error' | 'server_shutting_down' = 'engine_error') {
  return { error: { message, type: 'server_error', code } };
}
