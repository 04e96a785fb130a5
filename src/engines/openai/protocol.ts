// The parts of the OpenAI wire format the adapter reads. Everything is optional:
// the body comes from a server we do not control, so the adapter checks shapes.

export interface OpenAIModelList {
  data?: { id?: string; created?: number; owned_by?: string }[];
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** A tool call in an answer, or a piece of one in a stream (`index` says which call it adds to). */
export interface OpenAIToolCall {
  index?: unknown;
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

export interface OpenAIChoice {
  index?: unknown;
  message?: { content?: unknown; tool_calls?: unknown } | null;
  logprobs?: unknown;
  finish_reason?: unknown;
}

export interface OpenAIChatCompletion {
  choices?: unknown;
  usage?: OpenAIUsage | null;
  system_fingerprint?: unknown;
  error?: unknown;
}

export interface OpenAIChunkChoice {
  index?: unknown;
  delta?: { content?: unknown; tool_calls?: unknown } | null;
  logprobs?: unknown;
  finish_reason?: unknown;
}

export interface OpenAIChatChunk {
  choices?: unknown;
  usage?: OpenAIUsage | null;
  system_fingerprint?: unknown;
  error?: unknown;
}

export interface OpenAIEmbeddings {
  data?: { index?: number; embedding?: number[] }[];
}
