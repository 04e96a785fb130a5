// The parts of Ollama's native API the adapter reads and writes
// (https://github.com/ollama/ollama/blob/main/docs/api.md, api/types.go).
// What we read is all optional: the body comes from a server we do not control.

export interface OllamaTags {
  models?: { name?: string; model?: string; modified_at?: string }[];
}

export interface OllamaVersion {
  version?: string;
}

/** A call as Ollama writes it: arguments are a JSON object, not JSON text; `id` since 0.12.10. */
export interface OllamaToolCall {
  id?: string;
  function: { name: string; arguments: Record<string, unknown> };
}

/** One message of an /api/chat request. */
export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Base64 image data, without a data: prefix. */
  images?: string[];
  tool_calls?: OllamaToolCall[];
  /** Tool messages: the function whose result this is (Ollama's templates name it). */
  tool_name?: string;
  /** Tool messages: the call this answers (read by Ollama 0.12.10 and later, ignored before). */
  tool_call_id?: string;
}

/** One entry of Ollama's `logprobs` (0.12.11 and later): OpenAI's per-token shape. */
export interface OllamaLogprob {
  token?: unknown;
  logprob?: unknown;
  bytes?: unknown;
  top_logprobs?: unknown;
}

/** One NDJSON line of /api/chat (or the whole answer with stream:false). */
export interface OllamaChatFrame {
  message?: { content?: string; tool_calls?: unknown };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  logprobs?: unknown;
  error?: string;
}

export interface OllamaEmbed {
  embeddings?: number[][];
}

/** One NDJSON line of /api/pull. */
export interface OllamaPullFrame {
  status?: string;
  digest?: string;
  total?: number;
  completed?: number;
  error?: string;
}
