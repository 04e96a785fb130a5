// The one place that turns a node's engine kind into its adapter.
import type { Engine, EngineNodeOptions } from './types.js';
import { OpenAIEngine } from './openai/adapter.js';
import { OllamaEngine } from './ollama/adapter.js';
import { LocalEngine, type LocalEngineOptions } from './local/adapter.js';

export type EngineSpec =
  | { kind: 'openai'; options: EngineNodeOptions }
  | { kind: 'ollama'; options: EngineNodeOptions }
  | { kind: 'local'; options: LocalEngineOptions };

export function createEngine(spec: EngineSpec): Engine {
  switch (spec.kind) {
    case 'openai':
      return new OpenAIEngine(spec.options);
    case 'ollama':
      return new OllamaEngine(spec.options);
    case 'local':
      return new LocalEngine(spec.options);
  }
}
