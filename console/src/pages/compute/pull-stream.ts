// The model pull's event stream: POST with the bearer (EventSource cannot send one),
// read the body as it arrives and parse it as server-sent events. Frames are camelCase
// `{status, digest?, total?, completed?}`, ending with `{status: "success"}` or
// `{status: "error", error: {message, code}}`; no `[DONE]` follows.
import { createParser } from 'eventsource-parser';
import type { PullProgress } from '../../../../src/engines/types.js';
import type { PullBody, PullEngine } from '../../../../src/areas/llm/pull/schemas.js';
import { authorizedFetch } from '../../api/client.js';
import { problemOf } from '../../api/problem.js';

/** A progress frame; the last one carries `error` when the pull failed (relay.ts). */
export type PullFrame = PullProgress & { error?: { message: string; code: string } };

/**
 * Runs the pull, calling `onFrame` for each frame, and resolves with the last frame
 * (success or error), or null when the stream ended without one. A refusal before the
 * stream starts (bad URL, no node, conflict) rejects with the problem+json ApiError.
 */
export async function streamPull(
  engine: PullEngine,
  body: PullBody,
  signal: AbortSignal,
  onFrame: (frame: PullFrame) => void,
): Promise<PullFrame | null> {
  const response = await authorizedFetch(`/api/llm/v1/${engine}/models/pull/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw await problemOf(response);
  let last: PullFrame | null = null;
  const parser = createParser({
    onEvent(event) {
      let frame: PullFrame;
      try {
        frame = JSON.parse(event.data) as PullFrame;
      } catch {
        return; // a heartbeat or something that is not a frame
      }
      if (typeof frame.status !== 'string') return;
      if (frame.status === 'success' || frame.status === 'error') last = frame;
      onFrame(frame);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
      if (last) break;
    }
  } finally {
    reader.releaseLock();
  }
  return last;
}
