// OpenAI's run stream events (Assistants v2) and their framing: every event is an
// `event: <name>` line and a `data: <json>` line, the stream ends with `event: done`
// and `data: [DONE]`. The openai SDK dispatches on the event line, so it is never
// left out.
import type { ItemRow } from '../history/repository.js';
import type { RunRow } from '../runs/repository.js';
import { messageObject, type MessageObject } from '../threads/objects.js';
import { runObject, stepObject } from './objects.js';

export const DELTA = 'thread.message.delta';

export type EventName =
  | 'thread.created'
  | 'thread.run.created'
  | 'thread.run.queued'
  | 'thread.run.in_progress'
  | 'thread.run.cancelling'
  | 'thread.run.completed'
  | 'thread.run.incomplete'
  | 'thread.run.failed'
  | 'thread.run.cancelled'
  | 'thread.run.expired'
  | 'thread.run.step.created'
  | 'thread.run.step.in_progress'
  | 'thread.run.step.completed'
  | 'thread.run.step.failed'
  | 'thread.run.step.cancelled'
  | 'thread.run.step.expired'
  | 'thread.message.created'
  | 'thread.message.in_progress'
  | typeof DELTA
  | 'thread.message.completed'
  | 'thread.message.incomplete'
  | 'error';

export interface MessageDelta {
  id: string;
  object: 'thread.message.delta';
  delta: { content: { index: number; type: 'text'; text: { value: string } }[] };
}

export type RunEvent = { event: typeof DELTA; data: MessageDelta } | { event: Exclude<EventName, typeof DELTA>; data: unknown };

/** The run statuses a run ends with, each with its terminal event. */
export const TERMINAL_EVENTS: Record<string, EventName> = {
  completed: 'thread.run.completed',
  incomplete: 'thread.run.incomplete',
  failed: 'thread.run.failed',
  cancelled: 'thread.run.cancelled',
  expired: 'thread.run.expired',
};

export const isTerminal = (event: string): boolean => Object.values(TERMINAL_EVENTS).includes(event as EventName);

export const deltaOf = (messageId: string, value: string): MessageDelta => ({
  id: messageId,
  object: 'thread.message.delta',
  delta: { content: [{ index: 0, type: 'text', text: { value } }] },
});

/** One event as stream text. */
export const frameOf = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export const DONE_FRAME = 'event: done\ndata: [DONE]\n\n';

/**
 * The assistant message as announced when its run starts: in progress and, as OpenAI
 * sends it, without content yet (the SDK then builds the text from the deltas).
 */
export function announcedMessage(item: ItemRow): MessageObject {
  return { ...messageObject({ ...item, status: 'in_progress', content: '' }), content: [] };
}

/** What a started run announces, in order: the run in progress, its step, its message. */
export function startEvents(run: RunRow, item: ItemRow): RunEvent[] {
  const step = stepObject(run);
  const message = announcedMessage(item);
  return [
    { event: 'thread.run.in_progress', data: runObject(run) },
    ...(step
      ? [
          { event: 'thread.run.step.created' as const, data: step },
          { event: 'thread.run.step.in_progress' as const, data: step },
        ]
      : []),
    { event: 'thread.message.created', data: message },
    { event: 'thread.message.in_progress', data: message },
  ];
}

/**
 * What an ended run says last: its message as stored (full text, citations), its
 * step, and the terminal run event. `started`: whether the start events went out (a
 * run cancelled before it started has no step or message to close).
 */
export function endEvents(run: RunRow, item: ItemRow | undefined, started: boolean): RunEvent[] {
  const events: RunEvent[] = [];
  if (started && item) {
    events.push({
      event: item.status === 'completed' ? 'thread.message.completed' : 'thread.message.incomplete',
      data: messageObject(item),
    });
  }
  const step = started ? stepObject(run) : undefined;
  if (step) events.push({ event: `thread.run.step.${step.status}` as EventName as Exclude<EventName, typeof DELTA>, data: step });
  const terminal = TERMINAL_EVENTS[run.status];
  if (terminal) events.push({ event: terminal as Exclude<EventName, typeof DELTA>, data: runObject(run) });
  return events;
}
