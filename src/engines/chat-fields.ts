// What a chat request and its answer may carry beyond plain text: OpenAI's message
// shapes (content parts, tool calls, tool results) and its generation options.
// They keep OpenAI's wire names, so the `openai` adapter forwards them as they are
// (no per-request copy of large bodies); every other engine translates them and
// refuses, with EngineError('unsupported'), what it cannot honour.

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A function the model called (assistant messages and answers). `arguments` is JSON text, as the model wrote it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  /** Text; parts (user messages: text and images); null for an assistant turn that only calls tools. */
  content: string | ContentPart[] | null;
  name?: string;
  /** Assistant messages: the calls it made. */
  tool_calls?: ToolCall[];
  /** Tool messages: the call this is the result of. */
  tool_call_id?: string;
}

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/**
 * Generation options past model, messages, max tokens and temperature, as the client
 * sent them (validated at the edge). Absent means "not asked for": an adapter sends
 * only what is present.
 */
export interface ChatOptions {
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  stop?: string[];
  top_p?: number;
  seed?: number;
  /** Choices to generate (1 when absent). */
  n?: number;
  user?: string;
  presence_penalty?: number;
  frequency_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  metadata?: Record<string, string>;
}

/** The option names, for adapters that list what they honour. */
export type ChatOptionName = keyof ChatOptions;

/** The text of a message's content: parts' text joined, images left out, null as ''. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (content === null) return '';
  let text = '';
  for (const part of content) if (part.type === 'text') text += text === '' ? part.text : `\n${part.text}`;
  return text;
}
