// In the child: one chat generation with the options the gateway translated
// (protocol.ts `Generation`), streamed back as deltas and tool-call pieces.
// Everything built from the request (grammars, token biases) is built before
// generation starts and inside a try: a schema llama.cpp refuses is an error
// answer for this request, never a crash of the process serving every model.
import { randomBytes } from 'node:crypto';
import {
  TokenBias,
  type LLamaChatGenerateResponseOptions,
  type Llama,
  type LlamaChat,
  type LlamaChatResponseChunk,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import type { EngineFailure, FinishReason } from '../types.js';
import type { ChildMessage, Generation, ParentMessage } from './protocol.js';

export class Failure extends Error {
  constructor(
    readonly failure: EngineFailure,
    message: string,
  ) {
    super(message);
  }
}

type ChatMessageIn = Extract<ParentMessage, { op: 'chat' }>;
type Options = LLamaChatGenerateResponseOptions<undefined>;

export interface GenerateContext {
  llama: Llama;
  model: LlamaModel;
  session: LlamaChat;
  contextSize: number;
  signal: AbortSignal;
  /** Sends one delta or tool-call piece (counted against the credit window). */
  emit: (message: Extract<ChildMessage, { type: 'delta' | 'tool_call' }>) => void;
  send: (message: ChildMessage) => void;
}

let jsonGrammar: Promise<LlamaGrammar> | undefined;

export async function generate(message: ChatMessageIn, ctx: GenerateContext): Promise<void> {
  const { session, model, signal } = ctx;
  const { history, generation } = message;
  // Built before generation is announced as started: a refusal here is still an answer before any output.
  const options = await samplingOptions(generation, ctx);
  // Usage counts the prompt as the model sees it: template and function documentation included.
  const prompt = session.chatWrapper.generateContextState({
    chatHistory: history,
    availableFunctions: generation.functions,
    documentFunctionParams: generation.functions ? true : undefined,
  }).contextText;
  const promptTokens = prompt.tokenize(model.tokenizer).length;
  const room = ctx.contextSize - promptTokens;
  if (room < 1) throw new Failure('rejected', `The prompt is ${promptTokens} tokens; the model's context holds ${ctx.contextSize}.`);
  const maxTokens = Math.min(message.maxTokens, room);
  // Every token generated so far, as OpenAI counts (llama.cpp keeps a ring of this many: at most a context's worth).
  if (options.repeatPenalty) options.repeatPenalty.lastTokens = maxTokens;
  ctx.send({ type: 'started', id: message.id, promptTokens, maxTokens });

  const forced = generation.forcedCall;
  const callId = newCallId();
  let argumentsSent = false;
  const onResponseChunk = (chunk: LlamaChatResponseChunk) => {
    if (chunk.type !== undefined || chunk.text === '') return; // thoughts and other segments are not the answer
    if (!forced) ctx.emit({ type: 'delta', id: message.id, text: chunk.text });
    else if (forced.name !== undefined) {
      // The grammar admits only the function's arguments: they stream as the call's pieces.
      ctx.emit({
        type: 'tool_call',
        id: message.id,
        index: 0,
        ...(argumentsSent ? {} : { callId, name: forced.name }),
        arguments: chunk.text,
      });
      argumentsSent = true;
    } // a {"name", "arguments"} choice is only known whole: sent at the end
  };

  // Generated tokens as llama.cpp counts them (text held back by stop-trigger detection included).
  const meter = session.sequence.tokenMeter;
  const outputBefore = meter.usedOutputTokens;
  const response = await session.generateResponse(history, {
    ...options,
    ...(generation.functions
      ? { functions: generation.functions, documentFunctionParams: true, maxParallelFunctionCalls: generation.maxParallelFunctionCalls }
      : {}),
    maxTokens,
    temperature: message.temperature,
    signal,
    stopOnAbortSignal: true,
    onResponseChunk,
  } as Options);
  if (signal.aborted) throw new Failure('aborted', 'The request was aborted.');
  const stop = response.metadata.stopReason;
  // The end-of-generation token is sampled but is not part of the answer.
  const completionTokens = Math.max(0, meter.usedOutputTokens - outputBefore - (stop === 'eogToken' ? 1 : 0));
  const truncated = stop === 'maxTokens' || (stop !== 'abort' && stop !== 'functionCalls' && completionTokens >= maxTokens);

  let called = false;
  if (forced?.name !== undefined) {
    if (!argumentsSent) ctx.emit({ type: 'tool_call', id: message.id, index: 0, callId, name: forced.name, arguments: '' });
    called = true;
  } else if (forced) {
    const choice = chosenCall(response.response);
    if (choice) {
      ctx.emit({ type: 'tool_call', id: message.id, index: 0, callId, name: choice.name, arguments: choice.arguments });
      called = true;
    }
  } else {
    (response.functionCalls ?? []).forEach((call, index) => {
      const args = JSON.stringify(call.params ?? {});
      ctx.emit({
        type: 'tool_call',
        id: message.id,
        index,
        callId: index === 0 ? callId : newCallId(),
        name: call.functionName,
        arguments: args,
      });
      called = true;
    });
  }
  const finishReason: FinishReason = truncated ? 'length' : called ? 'tool_calls' : 'stop';
  ctx.send({ type: 'end', id: message.id, finishReason, promptTokens, completionTokens });
}

/** Everything but the function calling: sampling, stop strings, bias, grammar. */
async function samplingOptions(generation: Generation, ctx: GenerateContext): Promise<Options> {
  const options: Options = { repeatPenalty: false };
  if (generation.topP !== undefined) options.topP = generation.topP;
  if (generation.seed !== undefined) options.seed = generation.seed;
  if (generation.stop) options.customStopTriggers = generation.stop;
  if (generation.presencePenalty !== undefined || generation.frequencyPenalty !== undefined) {
    options.repeatPenalty = {
      penalty: 1, // llama.cpp's own multiplicative penalty stays off: OpenAI has only these two
      presencePenalty: generation.presencePenalty ?? 0,
      frequencyPenalty: generation.frequencyPenalty ?? 0,
      penalizeNewLine: true,
    };
  }
  if (generation.logitBias) options.tokenBias = tokenBias(generation.logitBias, ctx.model);
  const grammar = generation.grammar;
  if (grammar?.type === 'json') {
    jsonGrammar ??= ctx.llama.getGrammarFor('json');
    options.grammar = await jsonGrammar;
  } else if (grammar?.type === 'schema') {
    options.grammar = await ctx.llama.createGrammarForJsonSchema(grammar.schema as never).catch((error: unknown) => {
      const why = (error instanceof Error ? error.message : String(error)).slice(0, 200);
      throw new Failure('unsupported', `${grammar.field}: llama.cpp cannot decode under this schema's grammar (${why}).`);
    });
  }
  return options;
}

function tokenBias(entries: [number, number][], model: LlamaModel): TokenBias {
  const vocabulary = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length;
  if (typeof vocabulary !== 'number')
    throw new Failure('unsupported', "logit_bias: this model's vocabulary size is unknown to the local engine.");
  const bias = new TokenBias(model.tokenizer);
  for (const [token, value] of entries) {
    // Checked before any native call: an id past the vocabulary must not reach llama.cpp.
    if (token >= vocabulary)
      throw new Failure('unsupported', `logit_bias: token ${token} is not in the model's vocabulary (${vocabulary} tokens).`);
    // node-llama-cpp never biases end-of-generation tokens: refused rather than silently ignored.
    if (model.tokenizer.isEogToken(token as Token)) {
      throw new Failure('unsupported', `logit_bias: token ${token} ends generation; the local engine cannot bias it.`);
    }
    bias.set(token as Token, { logit: value }); // added to the logit, as OpenAI does
  }
  return bias;
}

/** The {"name", "arguments"} object a `required` choice among several tools decodes to. */
function chosenCall(text: string): { name: string; arguments: string } | undefined {
  try {
    const value = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof value.name === 'string') return { name: value.name, arguments: JSON.stringify(value.arguments ?? {}) };
  } catch {
    // Cut off by max_tokens: the name, if it was written, and the arguments so far.
    const match = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*/.exec(text);
    if (match) return { name: JSON.parse(`"${match[1]}"`) as string, arguments: text.slice(match[0].length) };
  }
  return undefined;
}

function newCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}
