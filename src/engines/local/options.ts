// A chat request's OpenAI fields as the local engine runs them: checked and
// translated here, in the gateway, so a field llama.cpp cannot honour is refused
// (EngineError 'unsupported', naming the field: the client's 400) before any model
// is loaded, and the child gets only what it applies.
//
// Tools: `auto` hands them to node-llama-cpp's function calling (the model decides);
// `required` and a named function cannot be forced through it, so they are decoded
// under a grammar that admits only a call (the named function's arguments, or a
// {"name", "arguments"} object choosing among the tools): the answer is always a
// well-formed call, never a text that merely looks like one.
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatModelResponse, GbnfJsonSchema } from 'node-llama-cpp';
import { EngineError, textOf, type ChatMessage, type ChatOptions, type ChatRequest, type ToolDefinition } from '../types.js';
import { toGrammarSchema } from './json-schema.js';
import type { Generation } from './protocol.js';

export interface ChatPlan {
  history: ChatHistoryItem[];
  generation: Generation;
}

/** What `parameters` means when a tool has none: no arguments. */
const NO_PARAMETERS: GbnfJsonSchema = { type: 'object' };
const UINT32 = 2 ** 32;
/** llama.cpp reads this seed as "pick one at random". */
const LLAMA_RANDOM_SEED = UINT32 - 1;

export function planChat(request: ChatRequest): ChatPlan {
  const options = request.options ?? {};
  refuseUnsupported(options);
  const generation: Generation = {};
  if (options.top_p !== undefined) generation.topP = options.top_p;
  if (options.seed !== undefined) {
    // llama.cpp's seed is 32 bits: the same seed always maps to the same one.
    const seed = ((options.seed % UINT32) + UINT32) % UINT32;
    generation.seed = seed === LLAMA_RANDOM_SEED ? seed - 1 : seed;
  }
  if (options.stop !== undefined && options.stop.length > 0) generation.stop = options.stop;
  if (options.presence_penalty) generation.presencePenalty = options.presence_penalty;
  if (options.frequency_penalty) generation.frequencyPenalty = options.frequency_penalty;
  if (options.logit_bias !== undefined) generation.logitBias = logitBias(options.logit_bias);

  const tools = toolsOffered(options);
  const forced = forcedTools(options, tools);
  const system: string[] = [];
  if (forced) {
    const chosen = forced.map((i) => tools[i]!);
    const schemas = forced.map((i) => parametersOf(tools[i]!, i));
    if (chosen.length === 1) {
      generation.grammar = { type: 'schema', schema: schemas[0]!, field: `tools[${forced[0]}].function.parameters` };
      generation.forcedCall = { name: chosen[0]!.function.name };
    } else {
      const oneOf = chosen.map((tool, i) => ({
        type: 'object' as const,
        properties: { name: { const: tool.function.name }, arguments: schemas[i]! },
      }));
      generation.grammar = { type: 'schema', schema: { oneOf }, field: 'tools' };
      generation.forcedCall = {};
    }
    system.push(callInstructions(chosen));
  } else if (tools.length > 0) {
    const functions: Record<string, ChatModelFunctions[string]> = {};
    tools.forEach((tool, i) => {
      const { name, description, parameters } = tool.function;
      functions[name] = {
        description,
        params: parameters === undefined ? undefined : toGrammarSchema(parameters, `tools[${i}].function.parameters`),
      };
    });
    generation.functions = functions;
    if (options.parallel_tool_calls === false) generation.maxParallelFunctionCalls = 1;
  }

  const format = options.response_format;
  if (format !== undefined && format.type !== 'text' && !forced) {
    if (generation.functions) {
      // node-llama-cpp decodes under either a grammar or its function-calling syntax, never both.
      throw new EngineError(
        'unsupported',
        `response_format: the local engine cannot combine ${format.type} with tools the model may call; send tool_choice "none", "required" or a named function.`,
      );
    }
    if (format.type === 'json_object' || format.json_schema.schema === undefined) generation.grammar = { type: 'json' };
    else {
      const field = 'response_format.json_schema.schema';
      generation.grammar = { type: 'schema', schema: toGrammarSchema(format.json_schema.schema, field), field };
    }
  }
  return { history: toHistory(request.messages, system), generation };
}

/** Fields llama.cpp has nothing for. */
function refuseUnsupported(options: ChatOptions): void {
  if (options.n !== undefined && options.n > 1) {
    throw new EngineError(
      'unsupported',
      'n: the local engine generates one choice per request; send n = 1 (or leave it out) and repeat the request.',
    );
  }
  if (options.logprobs === true || (options.top_logprobs !== undefined && options.top_logprobs > 0)) {
    const field = options.logprobs === true ? 'logprobs' : 'top_logprobs';
    throw new EngineError('unsupported', `${field}: the local engine does not return log probabilities.`);
  }
}

function logitBias(bias: Record<string, number>): [number, number][] {
  return Object.entries(bias).map(([token, value]) => {
    const id = Number(token);
    if (!/^\d+$/.test(token) || !Number.isSafeInteger(id)) {
      throw new EngineError(
        'unsupported',
        `logit_bias: "${token}" is not a token id (the local engine biases tokens of the model's own vocabulary).`,
      );
    }
    return [id, value];
  });
}

/** The tools the model may use, after tool_choice "none". */
function toolsOffered(options: ChatOptions): ToolDefinition[] {
  const tools = options.tools ?? [];
  if (options.tool_choice === 'none') return [];
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    if (names.has(tool.function.name)) {
      throw new EngineError(
        'unsupported',
        `tools[${i}].function.name: the local engine needs tool names to be distinct ("${tool.function.name}" repeats).`,
      );
    }
    names.add(tool.function.name);
  });
  return tools;
}

/** Indexes of the tools one of which must be called, or undefined when the model may answer in text. */
function forcedTools(options: ChatOptions, tools: ToolDefinition[]): number[] | undefined {
  const choice = options.tool_choice;
  if (choice === undefined || choice === 'auto' || choice === 'none') return undefined;
  if (choice === 'required') {
    if (tools.length === 0) throw new EngineError('unsupported', 'tool_choice: "required" needs at least one tool.');
    return tools.map((_, i) => i);
  }
  const index = tools.findIndex((t) => t.function.name === choice.function.name);
  if (index < 0) throw new EngineError('unsupported', `tool_choice.function.name: no tool is named "${choice.function.name}".`);
  return [index];
}

function parametersOf(tool: ToolDefinition, i: number): GbnfJsonSchema {
  const { parameters } = tool.function;
  return parameters === undefined ? NO_PARAMETERS : toGrammarSchema(parameters, `tools[${i}].function.parameters`);
}

/** Tells the model what the grammar will hold it to (a real model writes better arguments knowing it). */
function callInstructions(tools: ToolDefinition[]): string {
  const describe = (t: ToolDefinition) =>
    `${t.function.name}${t.function.description ? ` (${t.function.description})` : ''}, arguments schema: ${JSON.stringify(t.function.parameters ?? NO_PARAMETERS)}`;
  if (tools.length === 1) return `Answer by calling the function ${describe(tools[0]!)}. Reply with only the arguments, as a JSON object.`;
  return `Answer by calling one of these functions. Reply with only a JSON object {"name": <function name>, "arguments": <its arguments>}.\n${tools.map((t) => `- ${describe(t)}`).join('\n')}`;
}

/**
 * OpenAI messages as node-llama-cpp's history: developer is system; an assistant's
 * tool calls become function calls in its response, each with the result of the
 * tool message answering it (matched by tool_call_id); the model's answer after
 * tool results continues that same response, as node-llama-cpp renders it.
 */
function toHistory(messages: ChatMessage[], system: string[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = system.map((text) => ({ type: 'system', text }));
  /** Calls still waiting for their result, by id. */
  const pending = new Map<string, { call: ChatModelFunctionCall; at: string }>();
  let afterTools = false;
  const settle = (at: string) => {
    for (const [id, entry] of pending) {
      throw new EngineError(
        'unsupported',
        `${entry.at}: no tool message answers call "${id}" before ${at}; the local engine needs each call's result.`,
      );
    }
  };
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (message.role === 'tool') {
      const entry = message.tool_call_id === undefined ? undefined : pending.get(message.tool_call_id);
      if (!entry) throw new EngineError('unsupported', `${at}.tool_call_id: no earlier assistant tool call has this id.`);
      entry.call.result = jsonOrText(textOf(message.content));
      pending.delete(message.tool_call_id!);
      afterTools = true;
      return;
    }
    settle(at);
    if (Array.isArray(message.content)) {
      const image = message.content.findIndex((part) => part.type !== 'text');
      if (image >= 0)
        throw new EngineError('unsupported', `${at}.content[${image}]: the local engine reads text only; image parts are not supported.`);
    }
    const text = textOf(message.content);
    if (message.role !== 'assistant') {
      history.push(message.role === 'user' ? { type: 'user', text } : { type: 'system', text });
      afterTools = false;
      return;
    }
    const last = history.at(-1);
    let response: ChatModelResponse['response'];
    if (afterTools && last?.type === 'model') response = last.response;
    else {
      response = [];
      history.push({ type: 'model', response });
    }
    if (text !== '') response.push(text);
    (message.tool_calls ?? []).forEach((call, j) => {
      const item: ChatModelFunctionCall = {
        type: 'functionCall',
        name: call.function.name,
        params: jsonOrText(call.function.arguments),
        result: undefined,
      };
      response.push(item);
      pending.set(call.id, { call: item, at: `${at}.tool_calls[${j}]` });
    });
    afterTools = false;
  });
  settle('the end of the messages');
  // After tool results the model continues its response; otherwise it starts a new one.
  if (!afterTools) history.push({ type: 'model', response: [] });
  return history;
}

/** JSON text as its value (the template renders it back as JSON); anything else as the text it is. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
