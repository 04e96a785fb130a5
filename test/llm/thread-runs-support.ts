// Shared by the thread-run tests: an event-stream reader that keeps the `event:` line
// of every event (chat-support's openStream keeps only `data:`), and small helpers
// around the official SDK's beta clients.
import assert from 'node:assert/strict';
import type OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/eventually.js';
import { post } from './chat-support.js';

export const BASE = '/api/llm/v1';

/** One event as sent: its `event:` line (null when absent), its data (JSON parsed; `[DONE]` kept). */
export interface WireEvent {
  event: string | null;
  data: any;
}

export interface EventStream {
  status: number;
  headers: import('node:http').IncomingHttpHeaders;
  /** Every complete event so far (heartbeat comments left out). */
  events: WireEvent[];
  /** Every `:` comment line so far. */
  comments: string[];
  raw(): string;
  /** Resolves once `predicate` holds (fails after `timeoutMs` or when the stream ends first). */
  until(predicate: (events: WireEvent[]) => boolean, timeoutMs?: number): Promise<WireEvent[]>;
  /** Resolves with every event once the response has ended. */
  end(timeoutMs?: number): Promise<WireEvent[]>;
  /** Cuts the connection, as a client that goes away. */
  destroy(): void;
  /** Stops reading (the socket fills up, as a slow reader's does), and goes on. */
  pause(): void;
  resume(): void;
}

/** POSTs and reads the answer as an event stream (or, for a non-stream answer, `status` and `raw()`). */
export async function postStream(
  gw: Pick<TestGateway, 'url'>,
  path: string,
  json: unknown,
  headers: Record<string, string>,
): Promise<EventStream> {
  const pending = post(gw, BASE + path, json, headers);
  const res = await pending.response;
  let raw = '';
  let buffer = '';
  let ended = false;
  const events: WireEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    raw += chunk;
    buffer += chunk;
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      let event: string | null = null;
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
        else if (line.startsWith(':')) comments.push(line.slice(1).trim());
      }
      if (data !== undefined) events.push({ event, data: data === '[DONE]' ? data : JSON.parse(data) });
    }
    for (const waiter of [...waiters]) waiter();
  });
  const finish = () => {
    ended = true;
    for (const waiter of [...waiters]) waiter();
  };
  res.on('end', finish);
  res.on('close', finish);
  res.on('error', finish);
  const wait = (done: () => boolean, failOnEnd: boolean, what: string, timeoutMs: number) =>
    new Promise<WireEvent[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; events: ${names(events).join(', ')}`));
      }, timeoutMs);
      function check() {
        if (done()) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(events);
        } else if (ended && failOnEnd) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`stream ended before ${what}; events: ${names(events).join(', ')}`));
        }
      }
      waiters.add(check);
      check();
    });
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    comments,
    raw: () => raw,
    until: (predicate, timeoutMs = 10_000) => wait(() => predicate(events), true, 'the expected events', timeoutMs),
    end: (timeoutMs = 15_000) => wait(() => ended, false, 'the end of the stream', timeoutMs),
    destroy: pending.destroy,
    pause: () => res.pause(),
    resume: () => res.resume(),
  };
}

export const names = (events: WireEvent[]) => events.map((e) => e.event ?? '(none)');

/** The text of the deltas of a stream, joined. */
export const deltaText = (events: WireEvent[]) =>
  events
    .filter((e) => e.event === 'thread.message.delta')
    .map((e) => e.data.delta.content.map((c: any) => c.text.value).join(''))
    .join('');

/** Waits until the run reaches `status` (read through the SDK), and returns it. */
export async function runReaches(client: OpenAI, threadId: string, runId: string, statuses: string[], timeoutMs = 10_000) {
  let run: OpenAI.Beta.Threads.Run | undefined;
  await eventually(
    `run ${runId} ${statuses.join(' or ')}`,
    async () => {
      run = await client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
      return statuses.includes(run.status);
    },
    timeoutMs,
  );
  return run!;
}

/** The thread's assistant messages, oldest first. */
export async function assistantMessages(client: OpenAI, threadId: string) {
  const page = await client.beta.threads.messages.list(threadId, { order: 'asc' });
  return page.data.filter((m) => m.role === 'assistant');
}

export function textOf(message: OpenAI.Beta.Threads.Message): string {
  const part = message.content[0];
  assert.ok(part && part.type === 'text', 'a text part');
  return part.text.value;
}
