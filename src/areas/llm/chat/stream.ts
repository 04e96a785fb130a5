// chat/completions with `stream: true`: server-sent events in the spec's order
// (6.1): metadata, deltas, the final frame, the usage frame when asked for, [DONE].
//
// The router has chosen the node and the engine has accepted the request before the
// first byte goes out, so "no node could take it" is still a plain 503 problem,
// unless the engines took longer than GATEWAY_STREAM_EARLY_HEAD_MS: then the head and
// heartbeats went out while they were tried (early-head.ts), and a failure is in band.
// After the engine accepted nothing is retried: an engine failure ends the stream
// with an in-band error frame and [DONE]. The engine is read one batch (what one
// read of its answer held) at a time, and only once the socket took the previous
// one, so a slow reader slows the engine instead of filling memory.
import type { FastifyReply } from 'fastify';
import { EngineError, type ChatBatch, type ChatChunk } from '../../../engines/types.js';
import { ABORTED, AbortableReader, type ClientWatch } from '../calls/client-watch.js';
import { DONE, frameOf, SseWriter } from '../sse/writer.js';
import { completeUsage, StreamedText } from '../tokens/count.js';
import type { Lease } from '../router/types.js';
import type { ChatCall } from './call.js';
import { EarlyHead } from './early-head.js';
import { SERVER_TIMING, serverTiming } from '../server-timing.js';
import {
  DeltaFrames,
  errorFrame,
  finalFrame,
  type MetadataFrameMode,
  metadataFrame,
  newCompletion,
  usageFrame,
  type Completion,
} from './frames.js';

export async function completeStream(call: ChatCall, model: string, reply: FastifyReply, frameMode: MetadataFrameMode): Promise<void> {
  const client = call.deps.calls.watch(reply.raw);
  // Heartbeats from the head on when the engine is slow to answer (see early-head.ts).
  const early = new EarlyHead(reply, client, call.deps.earlyHeadMs, call.deps.heartbeatMs);
  try {
    let accepted: { value: AsyncIterable<ChatBatch>; lease: Lease };
    try {
      accepted = await call.deps.router.dispatch(call.tenantId, model, (lease) => {
        // From the first node chosen: no node at all is still a plain 503.
        early.arm();
        return lease.engine.chatStream(call.engineRequest(model, client.signal));
      });
    } catch (error) {
      early.disarm();
      if (early.sse) await early.failed(call, model, error);
      else await call.failedBeforeAnswer(model, error, client, reply);
      return;
    }
    early.disarm();
    const { observer } = call.deps;
    // Headers the edge set on the reply (CORS) go out with ours; the reply is ours to write from here.
    const headers = early.sse ? undefined : reply.getHeaders();
    const timing = serverTiming(reply, accepted.lease.engineMs, true, observer);
    if (headers) headers[SERVER_TIMING] = timing;
    if (!early.sse) reply.hijack();
    observer?.streamOpened();
    try {
      await relay(call, model, reply, headers, accepted, client, frameMode, early.sse);
    } finally {
      observer?.streamClosed();
    }
  } finally {
    client.dispose();
  }
}

async function relay(
  call: ChatCall,
  model: string,
  reply: FastifyReply,
  headers: ReturnType<FastifyReply['getHeaders']> | undefined,
  { value: batches, lease }: { value: AsyncIterable<ChatBatch>; lease: Lease },
  client: ClientWatch,
  frameMode: MetadataFrameMode,
  /** The stream, when its head already went out while the engine was slow to answer. */
  opened: SseWriter | undefined,
): Promise<void> {
  const completion = newCompletion(model);
  const sse = opened ?? new SseWriter(reply.raw, call.deps.heartbeatMs);
  const deltas = new DeltaFrames(completion);
  const reader = new AbortableReader(batches[Symbol.asyncIterator](), client.signal);
  const text = new StreamedText();
  let first = true;
  // Choices other than the first that have sent a frame (n > 1).
  const begun = new Set<number>();
  let end: Extract<ChatChunk, { type: 'end' }> | undefined;
  let failure: unknown;
  // Time to first token is taken at the engine's first batch of output.
  const observer = call.deps.observer;
  let awaitingOutput = observer !== undefined;
  try {
    if (!client.gone()) {
      if (!opened) sse.open(headers);
      await sse.sendJson(metadataFrame(frameMode, call.grounding, completion));
    }
    // Aborted: the client went away, or the server is shutting down.
    while (!client.signal.aborted) {
      const next = await reader.next();
      if (next === ABORTED || next.done) break;
      if (awaitingOutput) {
        awaitingOutput = false;
        observer!.firstTokenAfter(model, reply.elapsedTime);
      }
      // A batch is written at once; the socket's backpressure is waited on once per batch.
      let written: Promise<void> | undefined;
      for (const chunk of next.value) {
        if (chunk.type === 'delta' && chunk.choice === undefined && chunk.logprobs === undefined) {
          // Plain text of the only choice: what nearly every frame is, from a pre-serialised head.
          const { content } = chunk;
          if (content === '') continue;
          text.add(content);
          written = sse.sendJson(deltas.json(content, first));
          first = false;
          continue;
        }
        if (chunk.type === 'end') {
          end = chunk;
          break;
        }
        // Another choice's text, logprobs, or a tool call's piece: each choice names its role on its first frame.
        const index = chunk.choice ?? 0;
        const firstOfChoice = index === 0 ? first : !begun.has(index);
        if (chunk.type === 'delta') {
          if (chunk.content === '' && chunk.logprobs === undefined) continue;
          text.add(chunk.content);
          const delta = firstOfChoice ? { role: 'assistant', content: chunk.content } : { content: chunk.content };
          written = sse.sendJson(deltas.other(index, delta, chunk.logprobs));
        } else {
          // Usage counts a call's name and arguments as generated text when the engine reports none.
          text.add(chunk.name === undefined ? chunk.arguments : `${chunk.name} ${chunk.arguments}`);
          written = sse.sendJson(deltas.toolCall(index, firstOfChoice, chunk));
        }
        if (index === 0) first = false;
        else begun.add(index);
      }
      if (written) await written;
      if (end) break;
    }
  } catch (error) {
    failure = error;
  }
  // After its end the engine's answer is read out (its connection is reused); otherwise it is cancelled.
  if (end !== undefined && !client.gone()) reader.finish();
  else reader.abandon();

  if (client.gone()) {
    // Not the node's fault: the lease is released as a success.
    lease.release('ok');
    sse.end();
    call.record(model, lease.node.id, 'client_closed', await completeUsage(undefined, call.messages, text));
    return;
  }
  if (end === undefined) {
    // The server shutting down (the client can retry elsewhere; not the node's fault), or a
    // mid-stream death or a stream that stopped without its end: said in band, never a hang.
    const stopped = client.interrupted();
    if (!stopped) reply.log.warn({ err: failure, nodeId: lease.node.id, model }, 'engine failed mid-stream');
    sse.end(frameOf(stopped ? errorFrame(SHUTDOWN_MESSAGE, 'server_shutting_down') : errorFrame(midStreamMessage(failure))) + DONE);
    lease.release(stopped ? 'ok' : 'failed');
    call.record(model, lease.node.id, stopped ? 'interrupted' : 'engine_error', await completeUsage(undefined, call.messages, text));
    return;
  }
  const usage = await completeUsage(end.usage, call.messages, text);
  const usageAsked = call.body.stream_options?.include_usage === true;
  sse.end(finalFrames(completion, end, first, begun) + (usageAsked ? frameOf(usageFrame(completion, usage)) : '') + DONE);
  lease.release('ok');
  call.record(model, lease.node.id, client.gone() ? 'client_closed' : 'ok', usage);
}

/** The final frame of every choice (one with n = 1), each with its finish reason as the engine reported it. */
function finalFrames(completion: Completion, end: Extract<ChatChunk, { type: 'end' }>, first: boolean, begun: Set<number>): string {
  const fingerprint = end.systemFingerprint;
  const reasons = end.finishReasons;
  let choices = reasons && reasons.length > 1 ? reasons.length : 1;
  for (const index of begun) if (index >= choices) choices = index + 1;
  let frames = frameOf(finalFrame(completion, end.finishReason, first, 0, fingerprint));
  for (let i = 1; i < choices; i++) frames += frameOf(finalFrame(completion, reasons?.[i] ?? 'stop', !begun.has(i), i, fingerprint));
  return frames;
}

const SHUTDOWN_MESSAGE = 'The server is shutting down; the answer is incomplete. Retry the request.';

function midStreamMessage(failure: unknown): string {
  if (failure instanceof EngineError && failure.failure === 'timeout')
    return 'The model stopped responding while generating the answer; the answer is incomplete.';
  return 'The model failed while generating the answer; the answer is incomplete.';
}
