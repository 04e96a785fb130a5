// POST /completions with `stream: true`: OpenAI's legacy frames (`text_completion`
// objects, one choice each), a last empty frame per choice with its finish_reason,
// the usage frame when asked for, then [DONE]; `:` heartbeats while the engine is
// silent. No rag metadata frame: this surface has no grounding.
//
// As on chat/completions, the node is chosen and the engine has accepted the request
// before the first byte goes out; after that, a failure is an in-band error frame.
import type { FastifyReply } from 'fastify';
import { EngineError, type ChatBatch, type ChatChunk } from '../../../engines/types.js';
import { ABORTED, AbortableReader } from '../calls/client-watch.js';
import type { Lease } from '../router/types.js';
import { DONE, frameOf, SseWriter } from '../sse/writer.js';
import { StreamedText } from '../tokens/count.js';
import { completeStreamOn, type CompletionCall } from './call.js';
import { chunkFrame, errorFrame, newCompletion, usageFrame } from './frames.js';
import { usageOf } from './usage.js';
import { SERVER_TIMING, serverTiming } from '../server-timing.js';

export async function completionStream(call: CompletionCall, model: string, reply: FastifyReply): Promise<void> {
  const client = call.deps.calls.watch(reply.raw);
  try {
    let accepted: { value: AsyncIterable<ChatBatch>; lease: Lease };
    try {
      accepted = await call.deps.router.dispatch(call.tenantId, model, (lease) =>
        completeStreamOn(lease.engine, call.engineRequest(model, client.signal)),
      );
    } catch (error) {
      await call.failedBeforeAnswer(model, error, client, reply);
      return;
    }
    const headers = reply.getHeaders();
    headers[SERVER_TIMING] = serverTiming(reply, accepted.lease.engineMs, true, undefined);
    reply.hijack();
    const { value: batches, lease } = accepted;
    const completion = newCompletion(model);
    const sse = new SseWriter(reply.raw, call.deps.heartbeatMs);
    const reader = new AbortableReader(batches[Symbol.asyncIterator](), client.signal);
    const text = new StreamedText();
    let end: Extract<ChatChunk, { type: 'end' }> | undefined;
    let failure: unknown;
    try {
      if (!client.gone()) sse.open(headers);
      while (!client.signal.aborted) {
        const next = await reader.next();
        if (next === ABORTED || next.done) break;
        let written: Promise<void> | undefined;
        for (const chunk of next.value) {
          if (chunk.type === 'end') {
            end = chunk;
            break;
          }
          // Tool calls have no place in a text completion.
          if (chunk.type !== 'delta' || chunk.content === '') continue;
          text.add(chunk.content);
          written = sse.send(chunkFrame(completion, chunk.choice ?? 0, chunk.content, null, chunk.logprobs));
        }
        if (written) await written;
        if (end) break;
      }
    } catch (error) {
      failure = error;
    }
    if (end !== undefined && !client.gone()) reader.finish();
    else reader.abandon();

    if (client.gone()) {
      lease.release('ok');
      sse.end();
      call.record(model, lease.node.id, 'client_closed', await usageOf(undefined, call.prompts, text));
      return;
    }
    if (end === undefined) {
      const stopped = client.interrupted();
      if (!stopped) reply.log.warn({ err: failure, nodeId: lease.node.id, model }, 'engine failed mid-stream');
      const frame = stopped
        ? errorFrame('The server is shutting down; the answer is incomplete. Retry the request.', 'server_shutting_down')
        : errorFrame(
            failure instanceof EngineError && failure.failure === 'timeout'
              ? 'The model stopped responding while generating the answer; the answer is incomplete.'
              : 'The model failed while generating the answer; the answer is incomplete.',
          );
      sse.end(frameOf(frame) + DONE);
      lease.release(stopped ? 'ok' : 'failed');
      call.record(model, lease.node.id, stopped ? 'interrupted' : 'engine_error', await usageOf(undefined, call.prompts, text));
      return;
    }
    const usage = await usageOf(end.usage, call.prompts, text);
    const choices = call.prompts.length * call.n;
    let last = '';
    for (let index = 0; index < choices; index++)
      last += frameOf(chunkFrame(completion, index, '', end.finishReasons?.[index] ?? (index === 0 ? end.finishReason : 'stop')));
    if (call.body.stream_options?.include_usage === true) last += frameOf(usageFrame(completion, usage));
    sse.end(last + DONE);
    lease.release('ok');
    call.record(model, lease.node.id, client.gone() ? 'client_closed' : 'ok', usage);
  } finally {
    client.dispose();
  }
}
