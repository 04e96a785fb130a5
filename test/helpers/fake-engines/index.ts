// Small real engine servers on loopback for tests: one speaks the OpenAI-compatible
// protocol (vLLM, llama.cpp server, OpenAI), one Ollama's native API. They are real
// node:http servers, so adapters, the router and the routes are tested over real
// sockets, with real chunking, keep-alive, disconnects and backpressure.
//
// Knobs (FakeBehaviour) are read per request, so a test may change them between
// requests. `status`, `delayHeadersMs`, `hang`, `silentMs`, `tokenDelayMs` and
// `dieAfterTokens` shape chat answers only: model lists and health stay healthy
// (stop a node with close() to make it unreachable). A non-streaming chat answer
// takes silentMs + tokens × tokenDelayMs before its headers, like a real engine
// that generates before it answers. `tokenDelayMs` also paces Ollama pull frames,
// and `delayHeadersMs` delays an Ollama pull's answer too. `holdHeaders` (a promise)
// holds answers before their headers until the test settles it: a test that needs
// "while the engine has not answered" releases it, rather than racing a delay.
//
// The OpenAI fake also speaks the request fields past plain text, as OpenAI does:
// - `toolCalls` ([{name, arguments}]): when the request has `tools` (and tool_choice is
//   not 'none') and its last message is not a `tool` message, the answer is those calls
//   (ids `call_fake_<n>`, content null, finish_reason 'tool_calls'; streamed as a head
//   piece with id and name, then the arguments in two pieces). Without the knob, a
//   tool_choice naming a function calls it with `{}`.
// - A last message with role `tool` is answered `Fake answer to tool result: <content>`.
// - `response_format` json_schema: a JSON object built from the schema (its required
//   properties; first enum value, "fake", 1, true); json_object: `{"answer": <reply>}`.
// - `logprobs: true`: OpenAI-shaped logprobs per token (`top_logprobs` alternatives).
// - `n`: n choices, choice i's text is the reply with ` (i)` appended for i > 0
//   (streamed interleaved, one chunk per choice, each with its final frame).
// - Every answer carries `system_fingerprint: 'fp_fake'`.
// - `finishReason`: the finish_reason every choice reports instead of its own.
// - `lacks` (['/v1/embeddings', …]): those paths answer a bare 404 `{"detail":"Not Found"}`,
//   as a server without the endpoint does (vLLM's FastAPI).
// - `unservable` (model ids): listed, but chat and embeddings answer OpenAI's 404
//   `model_not_found`, as for a listed model the server cannot load.
//
// The folder: types.ts (these public shapes), server.ts (the shared node:http core),
// replies.ts (answer contents both protocols share), openai.ts and ollama.ts (each
// protocol's routes).
//
// The Ollama fake's /api/chat (ollama-chat.ts) speaks those fields natively: with
// `toolCalls` set, a request with `tools` whose last message is not a tool result is
// answered with the calls (ids `call_` + 8 characters as Ollama makes them, arguments
// as objects, each call streamed whole in a frame of its own, done_reason 'stop');
// `format` "json" answers `{"answer": <reply>}`, a schema format the schema's sample;
// `logprobs: true` adds Ollama's per-token logprobs (`top_logprobs` alternatives);
// tool-call arguments that are not objects and a bad `top_logprobs` get Ollama's 400.
import { startFake } from './server.js';
import { openaiRoutes } from './openai.js';
import { ollamaRoutes } from './ollama.js';
import type { FakeBehaviour, FakeEngine } from './types.js';

export type { FakeBehaviour, FakeRequest, FakeEngine } from './types.js';

export function startFakeOpenAI(behaviour: FakeBehaviour = {}): Promise<FakeEngine> {
  return startFake('openai', behaviour, openaiRoutes);
}

export function startFakeOllama(behaviour: FakeBehaviour = {}): Promise<FakeEngine> {
  return startFake('ollama', behaviour, ollamaRoutes);
}
