// The parts of Ollama's native API the adapter reads (https://github.com/ollama/ollama/blob/main/docs/api.md).
// Everything is optional: the body comes from a server we do not control.

export interface OllamaTags {
  models?: { name?: string; model?: string; modified_at?: string }[];
}

export interface OllamaVersion {
  version?: string;
}

/** One NDJSON line of /api/chat (or the whole answer with stream:false). */
export interface OllamaChatFrame {
  message?: { content?: string };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
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
