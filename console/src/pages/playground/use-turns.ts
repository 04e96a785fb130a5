// The conversation being had: its messages, the turn in flight, Stop, and what the
// user is typing. A turn appends the user's message and an empty answer, then fills the
// answer as tokens arrive. Stop aborts the request: the partial answer stays on screen,
// and the platform stores it as incomplete (client_disconnected).
import { useRef, useState } from 'preact/hooks';
import type { ConversationWithMessages, Message } from '../../../../src/areas/llm/conversations/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { navigate } from '../../router.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { streamTurn, TurnRefused } from './chat-stream.js';
import { groundingOf, type Scope } from './scope-picker.js';

let localIds = 0;

async function titleFor(id: string): Promise<string | null> {
  try {
    const conversation = await api<ConversationWithMessages>(`/api/llm/v1/conversations/${encodeURIComponent(id)}`, {
      query: { limit: 1 },
    });
    return conversation.title;
  } catch {
    return null; // only a heading: the conversation itself is on screen
  }
}

export function useTurns(options: { model: string; scope: Scope; onTitle: (title: string) => void }) {
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [streamingId, setStreamingId] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState('');
  const controller = useRef<AbortController | null>(null);
  const current = useRef<string | null>(null);
  current.current = conversationId;

  const reset = () => {
    controller.current?.abort();
    setConversationId(null);
    current.current = null;
    setMessages([]);
    setError('');
  };

  const open = (id: string, loaded: Message[]) => {
    setConversationId(id);
    current.current = id;
    setMessages(loaded);
  };

  const send = async () => {
    const text = draft;
    if (!text.trim() || controller.current) return;
    const now = new Date().toISOString();
    const n = ++localIds;
    const question: Message = { id: `local-question-${n}`, role: 'user', content: text, status: 'completed', createdAt: now };
    const answerId = `local-answer-${n}`;
    const model = options.model;
    const answer: Message = { id: answerId, role: 'assistant', content: '', status: 'in_progress', createdAt: now, model };
    const update = (patch: Partial<Message>) => setMessages((list) => list.map((m) => (m.id === answerId ? { ...m, ...patch } : m)));
    setMessages((list) => [...list, question, answer]);
    setDraft('');
    setError('');
    setStreamingId(answerId);
    const abort = new AbortController();
    controller.current = abort;
    let content = '';
    const startedIn = current.current;
    try {
      const end = await streamTurn(
        { message: text, model, ...(startedIn ? { conversationId: startedIn } : {}), ...groundingOf(options.scope) },
        abort.signal,
        {
          onStart: (meta) => {
            update({ rag_snippets: meta.snippets, rag_status: meta.status });
            if (!startedIn) adopt(meta.conversationId);
          },
          onText: (piece) => {
            content += piece;
            update({ content });
          },
        },
      );
      if (end.error) {
        update({ status: 'incomplete', incompleteReason: 'run_failed' });
        setError(t('playground.failedMidway', { detail: end.error }));
      } else {
        const cut = end.finishReason === 'length';
        update({ status: cut ? 'incomplete' : 'completed', ...(cut ? { incompleteReason: 'max_tokens' } : {}) });
        announce(t('playground.answered'));
      }
    } catch (failure) {
      if (abort.signal.aborted) {
        update({ status: 'incomplete', incompleteReason: 'client_disconnected' });
        announce(t('playground.stopped'));
      } else if (failure instanceof TurnRefused && failure.conversationId) {
        // Stored, then refused (no node took it): the question is kept in the conversation.
        if (!startedIn) adopt(failure.conversationId);
        update({ status: 'incomplete', incompleteReason: 'run_failed' });
        setError(problemText(failure.failure));
      } else {
        // Nothing was stored (or the network failed): take the turn back and give the text back.
        setMessages((list) => list.filter((m) => m.id !== question.id && m.id !== answerId));
        setDraft(text);
        setError(problemText(failure instanceof TurnRefused ? failure.failure : failure));
      }
    } finally {
      controller.current = null;
      setStreamingId(null);
    }
    // A new conversation got its title from the first message: show the server's.
    if (!startedIn && current.current) void titleFor(current.current).then((title) => title && options.onTitle(title));
  };

  const adopt = (id: string) => {
    setConversationId(id);
    current.current = id;
    keepFocusWhile(() => navigate(`/playground/${encodeURIComponent(id)}`, { replace: true }));
  };

  const stop = () => controller.current?.abort();

  return { conversationId, messages, streamingId, streaming: streamingId !== null, draft, setDraft, error, reset, open, send, stop };
}

/**
 * The shell moves focus to <main> on every path change (right for a new page); this URL
 * change is the same page, so focus goes back to where the user was typing.
 */
function keepFocusWhile(change: () => void): void {
  const was = document.activeElement;
  const main = document.getElementById('main');
  if (!(was instanceof HTMLElement) || !main || was === main) {
    change();
    return;
  }
  const back = () => was.focus();
  main.addEventListener('focus', back, { once: true });
  setTimeout(() => main.removeEventListener('focus', back), 1000);
  change();
}
