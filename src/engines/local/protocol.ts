// Messages between the gateway and its llama.cpp child process (Node IPC, JSON).
// Every request carries an id; the child answers with messages carrying that id.
import type { ChatMessage, EngineFailure, FinishReason } from '../types.js';

/**
 * Why a model is loaded: `chat` adds a context with one sequence, `embed` an
 * embedding context, `validate` loads, decodes one token and unloads again (the
 * trial load of a pulled file).
 */
export type LoadPurpose = 'chat' | 'embed' | 'validate';

export interface LoadInfo {
  trainContextSize: number;
  contextSize: number;
  embeddingLength: number;
  /** Threads llama.cpp evaluates the chat context with (the setting, capped at its maximum); once a chat context exists. */
  threads?: number;
}

export type ParentMessage =
  | { op: 'load'; id: number; key: string; path: string; purpose: LoadPurpose; contextSize: number; threads: number }
  | { op: 'unload'; id: number; key: string }
  | {
      op: 'chat';
      id: number;
      key: string;
      messages: ChatMessage[];
      maxTokens: number;
      temperature: number;
      /** Deltas the child may send before it waits for a `credit` (backpressure). */
      window: number;
    }
  | { op: 'embed'; id: number; key: string; input: string[] }
  /** The parent's consumer took `n` more deltas of chat `id`. */
  | { op: 'credit'; id: number; n: number }
  | { op: 'abort'; id: number };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: LoadInfo | number[][] | null }
  | { type: 'error'; id: number; failure: EngineFailure; message: string }
  /** The prompt fits and generation begins; `maxTokens` is what the context leaves room for. */
  | { type: 'started'; id: number; promptTokens: number; maxTokens: number }
  | { type: 'delta'; id: number; text: string }
  | { type: 'end'; id: number; finishReason: FinishReason; promptTokens: number; completionTokens: number };
