// The parts of the OpenAI wire format the adapter reads. Everything is optional:
// the body comes from a server we do not control, so the adapter checks shapes.

export interface OpenAIModelList {
  data?: { id?: string; created?: number; owned_by?: string }[];
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface OpenAIChatCompletion {
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: OpenAIUsage | null;
  error?: unknown;
}

export interface OpenAIChatChunk {
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: OpenAIUsage | null;
  error?: unknown;
}

export interface OpenAIEmbeddings {
  data?: { index?: number; embedding?: number[] }[];
}
