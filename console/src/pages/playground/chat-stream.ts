// One turn of the persisted chat (`POST /api/llm/v1/chat` with `stream: true`): the
// platform stores the conversation and streams chat/completions' frames, the first of
// which (`rag_metadata`) names the conversation and carries the grounding snippets.
// Read with fetch + a stream reader + eventsource-parser: EventSource cannot send a bearer.
import { createParser } from 'eventsource-parser';
import type { ChatBody, ChatTurn } from '../../../../src/areas/llm/conversations/schemas.js';
import { authorizedFetch } from '../../api/client.js';
import { problemOf } from '../../api/problem.js';

/** The stream's first frame in the `spec` mode, which this client asks for by name. */
type MetadataFrame = Pick<ChatTurn, 'conversationId' | 'messageId' | 'rag_snippets'> & {
  object: 'rag_metadata';
  status: ChatTurn['rag_status'];
};

/** What the parser reads of the other frames: a delta, the final chunk, or an in-band error. */
interface Frame {
  object?: string;
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  error?: { message?: string; code?: string };
}

export interface TurnHandlers {
  /** The turn is stored: its conversation, its answer's id, and what grounding found. */
  onStart: (meta: {
    conversationId: string;
    messageId: string;
    snippets: MetadataFrame['rag_snippets'];
    status: MetadataFrame['status'];
  }) => void;
  onText: (text: string) => void;
}

export interface TurnEnd {
  finishReason: string | null;
  /** An engine failure after the answer began (the partial answer is kept, stored incomplete). */
  error?: string;
}

/** Thrown for a refused turn; conversationId is set when the turn was stored anyway (X-Conversation-Id). */
export class TurnRefused extends Error {
  constructor(
    readonly failure: Error,
    readonly conversationId: string | null,
  ) {
    super(failure.message);
  }
}

export async function streamTurn(body: ChatBody, signal: AbortSignal, handlers: TurnHandlers): Promise<TurnEnd> {
  const response = await authorizedFetch('/api/llm/v1/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ ...body, stream: true, stream_options: { metadata_frame: 'spec' } }),
    signal,
  });
  if (!response.ok || !response.body) {
    throw new TurnRefused(await problemOf(response), response.headers.get('x-conversation-id'));
  }
  const end: TurnEnd = { finishReason: null };
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      const frame = JSON.parse(event.data) as Frame & Partial<MetadataFrame>;
      if (frame.object === 'rag_metadata' && frame.conversationId && frame.messageId) {
        handlers.onStart({
          conversationId: frame.conversationId,
          messageId: frame.messageId,
          snippets: frame.rag_snippets ?? null,
          status: frame.status ?? 'inactive',
        });
        return;
      }
      if (frame.error) {
        end.error = frame.error.message ?? frame.error.code ?? 'engine_error';
        return;
      }
      const choice = frame.choices?.[0];
      if (choice?.delta?.content) handlers.onText(choice.delta.content);
      if (choice?.finish_reason) end.finishReason = choice.finish_reason;
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      parser.feed(value);
    }
  } finally {
    // After [DONE] (or an abort) nothing more is wanted from the connection.
    await reader.cancel().catch(() => undefined);
  }
  return end;
}
