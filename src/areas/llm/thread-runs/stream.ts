// A thread run as an event stream (spec 6, OpenAI's framing): the reader follows the
// run's feed when the run executes in this process, or reads its stored events (and
// polls for more while it runs on another replica). Either way it starts from the
// run's first event, so a reader who comes back (an idempotent retry) sees it all.
//
// A reader that goes away stops reading, never the run. When the server shuts down,
// a run still streaming after the grace period is stopped (failed, its message
// incomplete) and the reader gets those closing events and `done`.
import type { FastifyReply } from 'fastify';
import type { Database } from '../../../platform/db/database.js';
import type { ClientWatch } from '../calls/client-watch.js';
import type { OpenCalls } from '../calls/open-calls.js';
import { itemRepository } from '../history/repository.js';
import type { RunExecutor } from '../runs/executor.js';
import { OPEN_STATUSES, runRepository, type RunRow } from '../runs/repository.js';
import { SseWriter } from '../sse/writer.js';
import { DONE_FRAME, endEvents, frameOf, isTerminal } from './events.js';
import type { RunFeed, RunFeeds } from './feed.js';

export interface StreamDeps {
  db: Database;
  feeds: RunFeeds;
  runs: RunExecutor;
  calls: OpenCalls;
  heartbeatMs: number;
  /** How often a run executing on another replica is checked for new stored events. */
  pollMs?: number;
}

const DEFAULT_POLL_MS = 500;

/** Answers the request with the run's event stream (the reply is hijacked); resolves when the stream has ended. */
export async function streamRun(deps: StreamDeps, reply: FastifyReply, run: RunRow): Promise<void> {
  const client = deps.calls.watch(reply.raw);
  try {
    // Headers the edge set on the reply (CORS) go out with ours; the reply is ours to write from here.
    const headers = reply.getHeaders();
    reply.hijack();
    const sse = new SseWriter(reply.raw, deps.heartbeatMs);
    if (client.gone()) return;
    sse.open(headers);
    const feed = deps.feeds.get(run.id);
    const finished = feed ? await followFeed(deps.runs, feed, sse, client) : await followStored(deps, run, sse, client);
    sse.end(finished ? DONE_FRAME : '');
  } finally {
    client.dispose();
  }
}

/** Writes the feed's events as they come; true once the run's last event went out, false when the reader left. */
async function followFeed(runs: RunExecutor, feed: RunFeed, sse: SseWriter, client: ClientWatch): Promise<boolean> {
  let next = 0;
  let stopped = false;
  for (;;) {
    while (next < feed.events.length) {
      if (!sse.writable) return false;
      const e = feed.events[next++]!;
      // Resolves at once unless the socket is full: then this reader waits, the run does not.
      await sse.write(frameOf(e.event, e.data));
    }
    if (feed.done) return true;
    if (client.gone() || !sse.writable) return false;
    if (client.interrupted() && !stopped) {
      // Shutting down and the grace period is over: the run ends (failed) and says so.
      stopped = true;
      runs.stop(feed.runId, 'shutdown');
    }
    await feed.changed(stopped ? undefined : client.signal);
  }
}

/** Writes the run's stored events, polling while it runs elsewhere; true once its last event went out. */
async function followStored(deps: StreamDeps, run: RunRow, sse: SseWriter, client: ClientWatch): Promise<boolean> {
  let fromSeq = 0;
  let started = false;
  let checkedEnded = false;
  for (;;) {
    for (const row of await runRepository.events(deps.db, run.id, fromSeq)) {
      if (!sse.writable) return false;
      fromSeq = row.seq + 1;
      if (row.event === 'thread.run.in_progress') started = true;
      await sse.write(frameOf(row.event, row.data));
      if (isTerminal(row.event)) return true;
    }
    if (client.signal.aborted || !sse.writable) return false;
    if (checkedEnded) {
      // Ended without its closing events stored (a process that died, recovered since): said from the rows.
      const ended = await runRepository.byId(deps.db, run.id);
      if (!ended) return false;
      const item = ended.message_id
        ? await itemRepository.get(deps.db, ended.tenant_id, ended.conversation_id, ended.message_id)
        : undefined;
      for (const e of endEvents(ended, item, started)) await sse.write(frameOf(e.event, e.data));
      return true;
    }
    const current = await runRepository.byId(deps.db, run.id);
    // Over: one more read of the events, which its process may have stored just now.
    if (!current || !OPEN_STATUSES.includes(current.status)) checkedEnded = true;
    else await sleep(deps.pollMs ?? DEFAULT_POLL_MS, client.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
