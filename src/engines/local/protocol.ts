// Messages between the gateway and its llama.cpp child process (Node IPC, JSON).
// Every request carries an id; the child answers with messages carrying that id.
import type { ChatHistoryItem, ChatModelFunctions, GbnfJsonSchema } from 'node-llama-cpp';
import type { EngineFailure, FinishReason } from '../types.js';

/**
 * Why a model is loaded: `chat` adds a context with one sequence, `embed` an
 * embedding context, `rank` a ranking context (a GGUF reranker's), `validate` loads, decodes one token and unloads again (the
 * trial load of a pulled file).
 */
export type LoadPurpose = 'chat' | 'embed' | 'rank' | 'validate';

export interface LoadInfo {
  trainContextSize: number;
  contextSize: number;
  embeddingLength: number;
  /** Threads llama.cpp evaluates the chat context with (the setting, capped at its maximum); once a chat context exists. */
  threads?: number;
}

/**
 * What the OpenAI options of a chat became, checked and translated in the gateway
 * (options.ts): the child only applies it. Absent fields: llama.cpp's defaults.
 */
export interface Generation {
  topP?: number;
  /** As llama.cpp's 32-bit sampler seed. */
  seed?: number;
  stop?: string[];
  /** OpenAI's penalties, over the tokens generated so far (llama.cpp's penalties sampler has the same formula). */
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Token id → value added to its logit (OpenAI's logit_bias). */
  logitBias?: [number, number][];
  /**
   * Constrained decoding: any JSON value, or a schema already checked to be one the
   * grammar enforces; `field` names it in errors.
   */
  grammar?: { type: 'json' } | { type: 'schema'; schema: GbnfJsonSchema; field: string };
  /** Tools the model may call (node-llama-cpp's function calling). */
  functions?: ChatModelFunctions;
  maxParallelFunctionCalls?: number;
  /**
   * The answer is a tool call, its text constrained by `grammar`: the arguments of
   * `name`, or with `name` absent a `{"name", "arguments"}` object choosing the function.
   */
  forcedCall?: { name?: string };
}

export type ParentMessage =
  | { op: 'load'; id: number; key: string; path: string; purpose: LoadPurpose; contextSize: number; threads: number }
  | { op: 'unload'; id: number; key: string }
  | {
      op: 'chat';
      id: number;
      key: string;
      /** The conversation as node-llama-cpp's history, ending with the model response to write (or continue). */
      history: ChatHistoryItem[];
      maxTokens: number;
      temperature: number;
      generation: Generation;
      /** Deltas the child may send before it waits for a `credit` (backpressure). */
      window: number;
    }
  | { op: 'embed'; id: number; key: string; input: string[] }
  /** Relevance scores (0..1) of `documents` for `query`, in order. */
  | { op: 'rank'; id: number; key: string; query: string; documents: string[] }
  /** The parent's consumer took `n` more deltas of chat `id`. */
  | { op: 'credit'; id: number; n: number }
  | { op: 'abort'; id: number };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: LoadInfo | number[][] | number[] | null }
  | { type: 'error'; id: number; failure: EngineFailure; message: string }
  /** The prompt fits and generation begins; `maxTokens` is what the context leaves room for. */
  | { type: 'started'; id: number; promptTokens: number; maxTokens: number }
  | { type: 'delta'; id: number; text: string }
  /** A piece of a tool call: the first piece of call `index` has its id and name. Counts against the window like a delta. */
  | { type: 'tool_call'; id: number; index: number; callId?: string; name?: string; arguments: string }
  | { type: 'end'; id: number; finishReason: FinishReason; promptTokens: number; completionTokens: number };
