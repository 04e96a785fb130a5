// The llama.cpp child process: loads GGUF models and runs chat, embeddings and ranking for
// the gateway over IPC (see protocol.ts). It lives in its own process because a
// malformed model file can make llama.cpp abort(); that must only end this process.
//
// Generation is serialised per model: one context with one sequence per chat
// model, taken in turn (FIFO). That keeps the KV cache at one context's size (a
// real model's cache is gigabytes) and lets a request reuse the previous prompt's
// prefix. A stream whose consumer stalls pauses generation (credit window).
import {
  getLlama,
  LlamaChat,
  LlamaLogLevel,
  type Llama,
  type LlamaContextSequence,
  type LlamaEmbeddingContext,
  type LlamaModel,
  type LlamaRankingContext,
} from 'node-llama-cpp';
import { Failure, generate } from './generate.js';
import { Mutex } from './mutex.js';
import type { ChildMessage, LoadInfo, ParentMessage } from './protocol.js';

interface LoadedModel {
  model: LlamaModel;
  info: LoadInfo;
  chat?: { session: LlamaChat; lock: Mutex; gate?: () => Promise<void> | undefined };
  embedding?: { context: LlamaEmbeddingContext; lock: Mutex };
  ranking?: { context: LlamaRankingContext; lock: Mutex };
}

/** A request in progress: its cancellation, and for chats the credit window. */
interface Running {
  controller: AbortController;
  outstanding: number;
  window: number;
  wake?: () => void;
}

const models = new Map<string, LoadedModel>();
/** llama.cpp's recent error lines: a failed load says why only there. */
const recentErrors: string[] = [];
const running = new Map<number, Running>();
let llama: Llama;

function send(message: ChildMessage): void {
  // The channel is gone when the parent is: nothing left to tell.
  if (process.connected) process.send!(message);
}

function fail(id: number, error: unknown, running?: Running): void {
  if (running?.controller.signal.aborted) send({ type: 'error', id, failure: 'aborted', message: 'The request was aborted.' });
  else if (error instanceof Failure) send({ type: 'error', id, failure: error.failure, message: error.message });
  else send({ type: 'error', id, failure: 'upstream_error', message: error instanceof Error ? error.message : String(error) });
}

async function load(message: Extract<ParentMessage, { op: 'load' }>): Promise<LoadInfo> {
  let loaded = models.get(message.key);
  if (!loaded) {
    recentErrors.length = 0;
    const model = await llama.loadModel({ modelPath: message.path }).catch(async (error: unknown) => {
      // llama.cpp's log lines reach us through their own async queue and may trail the rejection.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const why = recentErrors.join('; ').slice(0, 1000) || (error instanceof Error ? error.message : String(error));
      throw new Failure('model_not_found', `llama.cpp could not load the model: ${why}`);
    });
    const trained = model.trainContextSize;
    const contextSize = Math.max(16, Math.min(message.contextSize, trained > 0 ? trained : message.contextSize));
    loaded = { model, info: { trainContextSize: trained, contextSize, embeddingLength: model.embeddingVectorSize } };
    if (message.purpose !== 'validate') models.set(message.key, loaded);
  }
  const { model, info } = loaded;
  if (message.purpose === 'validate') {
    // Build a context and decode once: some malformed files only fail (or abort) there.
    try {
      const context = await model.createContext({ contextSize: Math.min(info.contextSize, 256), threads: message.threads });
      await warmUp(context.getSequence(), model);
    } finally {
      await model.dispose();
    }
  } else if (message.purpose === 'chat' && !loaded.chat) {
    const context = await model.createContext({ contextSize: info.contextSize, threads: message.threads, sequences: 1 });
    info.threads = context.idealThreads;
    const sequence = context.getSequence();
    await warmUp(sequence, model);
    const chat: NonNullable<LoadedModel['chat']> = { session: new LlamaChat({ contextSequence: sequence }), lock: new Mutex() };
    gateGeneration(sequence, () => chat.gate?.());
    loaded.chat = chat;
  } else if (message.purpose === 'embed' && !loaded.embedding) {
    const context = await model.createEmbeddingContext({ contextSize: info.contextSize, threads: message.threads });
    loaded.embedding = { context, lock: new Mutex() };
  } else if (message.purpose === 'rank' && !loaded.ranking) {
    // node-llama-cpp refuses a model without a ranking head (no cls.weight / cls.output.weight):
    // that is the caller's choice of model, a 400, not a broken file.
    const context = await model
      .createRankingContext({ contextSize: info.contextSize, threads: message.threads })
      .catch((error: unknown) => {
        throw new Failure('unsupported', `This model cannot rerank: ${error instanceof Error ? error.message : String(error)}`);
      });
    loaded.ranking = { context, lock: new Mutex() };
  }
  return info;
}

async function warmUp(sequence: LlamaContextSequence, model: LlamaModel): Promise<void> {
  const tokens = model.tokens.bos !== null ? [model.tokens.bos] : model.tokenize('a');
  if (tokens.length === 0) return;
  await sequence.evaluateWithoutGeneratingNewTokens(tokens);
  await sequence.clearHistory();
}

/**
 * LlamaChat pulls each new token from `sequence.evaluate()`'s generator. Waiting on
 * the gate before each pull pauses llama.cpp itself while the consumer is behind,
 * rather than buffering what it generates.
 */
function gateGeneration(sequence: LlamaContextSequence, gate: () => Promise<void> | undefined): void {
  const evaluate = sequence.evaluate.bind(sequence);
  sequence.evaluate = ((tokens, options) => gated(evaluate(tokens, options), gate)) as typeof sequence.evaluate;
}

async function* gated<T, R, N>(inner: AsyncGenerator<T, R, N>, gate: () => Promise<void> | undefined): AsyncGenerator<T, R, N> {
  let finished = false;
  try {
    let input = undefined as N;
    for (;;) {
      await gate();
      const step = await inner.next(input);
      if (step.done) {
        finished = true;
        return step.value;
      }
      input = yield step.value;
    }
  } finally {
    if (!finished) await inner.return(undefined as R);
  }
}

async function chat(message: Extract<ParentMessage, { op: 'chat' }>, run: Running): Promise<void> {
  const loaded = models.get(message.key);
  if (!loaded?.chat) throw new Failure('model_not_found', 'The model is not loaded.');
  const chat = loaded.chat;
  const signal = run.controller.signal;
  const release = await chat.lock.acquire(signal);
  try {
    chat.gate = () => waitForCredit(run);
    await generate(message, {
      llama,
      model: loaded.model,
      session: chat.session,
      contextSize: loaded.info.contextSize,
      signal,
      emit(piece) {
        run.outstanding++;
        send(piece);
      },
      send,
    });
  } finally {
    chat.gate = undefined;
    release();
  }
}

function waitForCredit(run: Running): Promise<void> | undefined {
  if (run.outstanding < run.window || run.controller.signal.aborted) return undefined;
  return new Promise((resolve) => (run.wake = resolve)); // a credit or the abort wakes it
}

async function embed(message: Extract<ParentMessage, { op: 'embed' }>, run: Running): Promise<number[][]> {
  const embedding = models.get(message.key)?.embedding;
  if (!embedding) throw new Failure('model_not_found', 'The model is not loaded for embeddings.');
  const release = await embedding.lock.acquire(run.controller.signal);
  try {
    const vectors: number[][] = [];
    for (const text of message.input) {
      run.controller.signal.throwIfAborted();
      const result = await embedding.context.getEmbeddingFor(text).catch((error: unknown) => {
        throw new Failure('rejected', `Embedding failed: ${error instanceof Error ? error.message : String(error)}`);
      });
      vectors.push(Array.from(result.vector));
    }
    return vectors;
  } finally {
    release();
  }
}

async function rank(message: Extract<ParentMessage, { op: 'rank' }>, run: Running): Promise<number[]> {
  const ranking = models.get(message.key)?.ranking;
  if (!ranking) throw new Failure('model_not_found', 'The model is not loaded for ranking.');
  const release = await ranking.lock.acquire(run.controller.signal);
  try {
    run.controller.signal.throwIfAborted();
    return await ranking.context.rankAll(message.query, message.documents).catch((error: unknown) => {
      throw new Failure('rejected', `Ranking failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  } finally {
    release();
  }
}

async function unload(key: string): Promise<void> {
  const loaded = models.get(key);
  models.delete(key);
  await loaded?.model.dispose();
}

async function handle(message: ParentMessage): Promise<void> {
  if (message.op === 'credit') {
    const run = running.get(message.id);
    if (!run) return;
    run.outstanding -= message.n;
    run.wake?.();
    run.wake = undefined;
    return;
  }
  if (message.op === 'abort') {
    running.get(message.id)?.controller.abort();
    return;
  }
  const run: Running = { controller: new AbortController(), outstanding: 0, window: message.op === 'chat' ? message.window : 0 };
  run.controller.signal.addEventListener('abort', () => run.wake?.(), { once: true });
  running.set(message.id, run);
  try {
    if (message.op === 'load') send({ type: 'result', id: message.id, value: await load(message) });
    else if (message.op === 'unload') {
      await unload(message.key);
      send({ type: 'result', id: message.id, value: null });
    } else if (message.op === 'embed') send({ type: 'result', id: message.id, value: await embed(message, run) });
    else if (message.op === 'rank') send({ type: 'result', id: message.id, value: await rank(message, run) });
    else await chat(message, run);
  } catch (error) {
    fail(message.id, error, run);
  } finally {
    running.delete(message.id);
  }
}

// Without the gateway there is nothing to serve: leave with it.
process.on('disconnect', () => process.exit(0));

llama = await getLlama({
  gpu: false,
  build: 'never',
  logLevel: LlamaLogLevel.error,
  progressLogs: false,
  logger(_level, message) {
    const line = message.trim();
    if (!line) return;
    process.stderr.write(`${line}\n`); // the gateway logs it
    recentErrors.push(line);
    if (recentErrors.length > 4) recentErrors.shift();
  },
});
process.on('message', (message: ParentMessage) => void handle(message));
send({ type: 'ready' });
