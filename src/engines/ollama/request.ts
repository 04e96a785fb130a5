// How an OpenAI-shaped chat request becomes the body of Ollama's native /api/chat.
// Everything is checked before anything is sent: a field Ollama cannot honour is an
// EngineError('unsupported') whose message (ours, naming the field) the client gets
// as a 400, and no engine request is made. Plain messages are sent as they came (no
// per-request copy of the conversation on the common path).
import { EngineError, type ChatMessage, type ChatOptions, type ChatRequest, type ContentPart, type ToolCall } from '../types.js';
import type { OllamaMessage, OllamaToolCall } from './protocol.js';

export interface OllamaChatBody {
  model: string;
  messages: readonly (OllamaMessage | ChatMessage)[];
  stream: boolean;
  options: Record<string, unknown>;
  tools?: unknown[];
  /** "json", or a JSON schema the answer is constrained to. */
  format?: 'json' | Record<string, unknown>;
  /** Ollama 0.12.11 and later; earlier versions ignore both (unknown fields). */
  logprobs?: true;
  top_logprobs?: number;
}

function unsupported(message: string): EngineError {
  return new EngineError('unsupported', message, { retryable: false });
}

/** The /api/chat body for `request`; throws EngineError('unsupported') naming the first field Ollama cannot honour. */
export function chatBody(request: ChatRequest, stream: boolean): OllamaChatBody {
  const options: Record<string, unknown> = { num_predict: request.maxTokens, temperature: request.temperature };
  const extra = request.options;
  if (extra !== undefined) refuseUnsupported(extra);
  const body: OllamaChatBody = { model: request.model, messages: ollamaMessages(request.messages), stream, options };
  if (extra === undefined) return body;

  // tool_choice "none" means the model must not call: Ollama has no such switch, but
  // a model offered no tools calls none. The conversation's earlier calls still go.
  if (extra.tools !== undefined && extra.tools.length > 0 && extra.tool_choice !== 'none') body.tools = extra.tools;
  const format = extra.response_format;
  if (format?.type === 'json_object') body.format = 'json';
  // Ollama constrains decoding to the schema (a grammar), so `strict` holds either way.
  else if (format?.type === 'json_schema') body.format = format.json_schema.schema ?? 'json';

  if (extra.stop !== undefined && extra.stop.length > 0) options.stop = extra.stop;
  if (extra.top_p !== undefined) options.top_p = extra.top_p;
  if (extra.seed !== undefined) options.seed = extra.seed;
  if (extra.presence_penalty !== undefined) options.presence_penalty = extra.presence_penalty;
  if (extra.frequency_penalty !== undefined) options.frequency_penalty = extra.frequency_penalty;
  if (extra.logprobs === true) {
    body.logprobs = true;
    if (extra.top_logprobs !== undefined && extra.top_logprobs > 0) body.top_logprobs = extra.top_logprobs;
  }
  // `user` and `metadata` are for the caller's own bookkeeping: they change nothing
  // in what is generated, and Ollama has nowhere to put them. They are not sent.
  return body;
}

/** The options Ollama has no counterpart for. */
function refuseUnsupported(o: ChatOptions): void {
  const choice = o.tool_choice;
  if (choice === 'required')
    throw unsupported(
      'tool_choice "required" is not supported for this model: its engine cannot force a tool call. Use "auto" (the default) or "none".',
    );
  if (typeof choice === 'object' && choice !== null)
    throw unsupported(
      'tool_choice naming a function is not supported for this model: its engine cannot force a tool call. Use "auto" (the default) or "none".',
    );
  if (o.parallel_tool_calls === false)
    throw unsupported(
      'parallel_tool_calls: false is not supported for this model: its engine cannot limit the model to one tool call per turn. Leave it out or set it to true.',
    );
  if (o.n !== undefined && o.n > 1)
    throw unsupported(
      'n greater than 1 is not supported for this model: its engine generates one choice per request. Leave n out (or send 1) and repeat the request for more choices.',
    );
  if (o.logit_bias !== undefined && Object.keys(o.logit_bias).length > 0)
    throw unsupported('logit_bias is not supported for this model: its engine cannot bias individual tokens. Leave it out.');
}

/**
 * Ollama's messages. A message Ollama reads as it is (system, user or assistant text,
 * nothing else) is passed through as the same object; the array is copied only from
 * the first message that needs translating.
 */
function ollamaMessages(messages: ChatMessage[]): readonly (OllamaMessage | ChatMessage)[] {
  let out: (OllamaMessage | ChatMessage)[] | undefined;
  // Tool results name their function (Ollama's templates show it); OpenAI names only the call's id.
  const callNames = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (isPlain(m)) {
      out?.push(m);
      continue;
    }
    out ??= messages.slice(0, i);
    out.push(translate(m, i, callNames));
  }
  return out ?? messages;
}

function isPlain(m: ChatMessage): boolean {
  return (
    (m.role === 'user' || m.role === 'system' || m.role === 'assistant') &&
    typeof m.content === 'string' &&
    m.name === undefined &&
    m.tool_calls === undefined &&
    m.tool_call_id === undefined
  );
}

function translate(m: ChatMessage, i: number, callNames: Map<string, string>): OllamaMessage {
  // Ollama knows no developer role; OpenAI defines it as the system prompt of newer models.
  const role = m.role === 'developer' ? 'system' : m.role;
  if (m.name !== undefined && role !== 'tool')
    throw unsupported(
      `messages[${i}].name is not supported for this model: its engine has no participant names. Leave it out, or put the name into the content.`,
    );
  const out: OllamaMessage = { role, content: '' };
  if (typeof m.content === 'string') out.content = m.content;
  else if (Array.isArray(m.content)) {
    const { text, images } = partsOf(m.content, i);
    out.content = text;
    if (images.length > 0) out.images = images;
  }
  if (m.tool_calls !== undefined && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((call, j) => {
      callNames.set(call.id, call.function.name);
      return { id: call.id, function: { name: call.function.name, arguments: argumentsOf(call, i, j) } } satisfies OllamaToolCall;
    });
  }
  if (role === 'tool') {
    const name = m.name ?? (m.tool_call_id === undefined ? undefined : callNames.get(m.tool_call_id));
    if (name !== undefined) out.tool_name = name;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  }
  return out;
}

/** Ollama takes a call's arguments as a JSON object, where OpenAI has the model's JSON text. */
function argumentsOf(call: ToolCall, i: number, j: number): Record<string, unknown> {
  const text = call.function.arguments;
  // A call without arguments is sometimes sent as '' rather than '{}'.
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw unsupported(
      `messages[${i}].tool_calls[${j}].function.arguments must be the text of a JSON object for this model: its engine takes a call's arguments as an object.`,
    );
  return value as Record<string, unknown>;
}

const DATA_URL = /^data:image\/[a-z0-9.+-]+;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Text parts joined by newlines (as textOf does), images as Ollama's bare base64. */
function partsOf(parts: ContentPart[], i: number): { text: string; images: string[] } {
  let text = '';
  const images: string[] = [];
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j]!;
    if (part.type === 'text') {
      text += text === '' ? part.text : `\n${part.text}`;
      continue;
    }
    const field = `messages[${i}].content[${j}]`;
    if (part.type !== 'image_url')
      throw unsupported(`${field} is a part of type "${(part as { type: string }).type}", which this model's engine cannot read.`);
    const url = part.image_url.url;
    if (/^https?:/i.test(url))
      throw unsupported(
        `${field}.image_url.url is a web address: images are not fetched on a client's behalf for this model. Send the image inline as a data URL (data:image/png;base64,…).`,
      );
    const prefix = DATA_URL.exec(url);
    if (prefix === null)
      throw unsupported(`${field}.image_url.url must be a data URL of an image (data:image/png;base64,…) for this model.`);
    const data = url.slice(prefix[0].length);
    if (data === '' || data.length % 4 !== 0 || !BASE64.test(data))
      throw unsupported(`${field}.image_url.url does not hold valid base64 image data.`);
    // `detail` has no counterpart: Ollama sizes images as its model requires.
    images.push(data);
  }
  return { text, images };
}
