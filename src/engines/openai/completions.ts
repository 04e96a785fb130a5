// Legacy text completions on an OpenAI-compatible server (POST /v1/completions),
// JSON and streamed. Kept apart from the chat adapter: the wire shape differs
// (`prompt` and `choices[].text`, several prompts in one request, `index` across them).
//
// A 404 here is usually a server without the legacy endpoint, or OpenAI's "this is
// a chat model" answer: statusError tells those (endpoint_missing, a 400 naming the
// endpoint) from a model the node does not have (model_not_found).
import type { EngineHttp, ResponseBody } from '../http/client.js';
import { engineError, streamError } from '../http/errors.js';
import { SseParser } from '../http/lines.js';
import { cancellable, release } from '../http/stream.js';
import type { ChatBatch, CompletionChoice, CompletionRequest, CompletionResult, EngineUsage, FinishReason } from '../types.js';

interface WireChoice {
  index?: number;
  text?: string | null;
  finish_reason?: string | null;
  logprobs?: unknown;
}

interface WireCompletion {
  choices?: WireChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: unknown;
}

const PATH = '/v1/completions';

/** How many choices the request asks for: n per prompt. */
const choiceCount = (request: CompletionRequest) => request.prompt.length * (request.options?.n ?? 1);

function completionBody(request: CompletionRequest, stream: boolean): object {
  // One prompt goes as a string: servers that take only that form (older llama.cpp) still answer.
  const prompt = request.prompt.length === 1 ? request.prompt[0] : request.prompt;
  const body = {
    ...request.options,
    model: request.model,
    prompt,
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    stream,
  };
  return stream ? { ...body, stream_options: { include_usage: true } } : body;
}

export async function complete(http: EngineHttp, request: CompletionRequest): Promise<CompletionResult> {
  const answer = await http.json<WireCompletion>('POST', PATH, completionBody(request, false), request.signal, request.model);
  if (answer?.error) throw inBand(http, answer.error, true);
  const wire = answer?.choices;
  const count = choiceCount(request);
  if (!Array.isArray(wire) || wire.length !== count) http.malformed('a text completion');
  const choices: CompletionChoice[] = new Array(count);
  wire.forEach((choice, position) => {
    const index = typeof choice?.index === 'number' ? choice.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= count || choices[index]) http.malformed('a text completion');
    choices[index] = {
      text: typeof choice.text === 'string' ? choice.text : '',
      finishReason: finishReasonOf(choice.finish_reason) ?? 'stop',
      ...(choice.logprobs != null ? { logprobs: choice.logprobs } : {}),
    };
  });
  return { choices, usage: usageOf(answer.usage) };
}

export async function completeStream(http: EngineHttp, request: CompletionRequest): Promise<AsyncIterable<ChatBatch>> {
  const response = await http.send('POST', PATH, completionBody(request, true), request.signal, request.model);
  return cancellable(response.body, frames(http, response.body, request.signal, choiceCount(request)));
}

async function* frames(
  http: EngineHttp,
  body: ResponseBody,
  signal: AbortSignal,
  count: number,
): AsyncGenerator<ChatBatch, void, undefined> {
  const sse = new SseParser();
  const events: string[] = [];
  const reasons: FinishReason[] = new Array(count).fill('stop');
  let usage: EngineUsage = {};
  let done = false;
  const end = (): ChatBatch[number] => ({ type: 'end', finishReason: reasons[0]!, finishReasons: reasons, usage });
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (done) continue; // after [DONE]: read the (empty) rest so the connection stays reusable
      sse.push(chunk, events);
      const batch: ChatBatch = [];
      let failure: Error | undefined;
      for (const data of events) {
        if (data === '[DONE]') {
          done = true;
          break;
        }
        let frame: WireCompletion;
        try {
          frame = JSON.parse(data) as WireCompletion;
        } catch {
          failure = engineError(http.ctx, 'upstream_error', `${http.ctx.label} sent a stream frame that is not JSON`, { retryable: false });
          break;
        }
        if (frame.error) {
          failure = inBand(http, frame.error, false);
          break;
        }
        if (frame.usage) usage = usageOf(frame.usage);
        for (const choice of frame.choices ?? []) {
          const index = typeof choice?.index === 'number' && Number.isInteger(choice.index) ? choice.index : 0;
          if (index < 0 || index >= count) continue;
          const reason = finishReasonOf(choice.finish_reason);
          if (reason !== undefined) reasons[index] = reason;
          if (typeof choice.text === 'string' && choice.text !== '')
            batch.push({
              type: 'delta',
              content: choice.text,
              choice: index,
              ...(choice.logprobs != null ? { logprobs: choice.logprobs } : {}),
            });
        }
      }
      events.length = 0;
      if (done) batch.push(end());
      if (batch.length > 0) yield batch;
      if (failure) throw failure;
    }
    if (!done) {
      sse.end(events);
      if (events.includes('[DONE]')) yield [end()];
      else throw engineError(http.ctx, 'upstream_error', `${http.ctx.label} ended its stream without [DONE]`, { retryable: false });
    }
  } catch (err) {
    if (!done) throw streamError(http.ctx, err, signal);
  } finally {
    release(body);
  }
}

function finishReasonOf(reason: unknown): FinishReason | undefined {
  if (reason === null || reason === undefined) return undefined;
  if (reason === 'length' || reason === 'content_filter') return reason;
  return 'stop';
}

function usageOf(usage: WireCompletion['usage']): EngineUsage {
  if (!usage) return {};
  return {
    ...(typeof usage.prompt_tokens === 'number' ? { promptTokens: usage.prompt_tokens } : {}),
    ...(typeof usage.completion_tokens === 'number' ? { completionTokens: usage.completion_tokens } : {}),
  };
}

function inBand(http: EngineHttp, error: unknown, beforeOutput: boolean) {
  const message = typeof error === 'string' ? error : String((error as { message?: unknown })?.message ?? JSON.stringify(error));
  return engineError(http.ctx, 'upstream_error', `${http.ctx.label} reported an error: ${message}`, { retryable: beforeOutput });
}
