// The playground: a chat on the persisted chat API. Each turn streams from
// `POST /api/llm/v1/chat` (stream: true), which keeps the conversation; once the first
// frame names it, the URL becomes /playground/:conversationId (replace), so a reload
// reopens it from `GET /api/llm/v1/conversations/{id}`, citations included.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConversationWithMessages, Message } from '../../../../src/areas/llm/conversations/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { navigate } from '../../router.js';
import { ErrorView } from '../../ui/error-view.js';
import { Link } from '../../ui/link.js';
import { Composer } from './composer.js';
import { ModelPicker } from './model-picker.js';
import './playground.css';
import { type Scope, ScopePicker } from './scope-picker.js';
import { Transcript } from './transcript.js';
import { useTurns } from './use-turns.js';

// A conversation's messages come 100 a page, oldest first; a playground reads at most this many pages.
const MAX_PAGES = 20;

export function PlaygroundPage(props: { conversationId?: string | undefined }) {
  const [model, setModel] = useState('auto');
  const [scope, setScope] = useState<Scope>({});
  const [title, setTitle] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<unknown>(undefined);
  const [truncated, setTruncated] = useState(0);
  const [round, setRound] = useState(0);
  const turns = useTurns({ model, scope, onTitle: setTitle });
  // The conversation shown; the URL follows it, and a URL this page set itself is not reloaded.
  const shown = useRef<string | undefined>(undefined);
  shown.current = turns.conversationId ?? undefined;

  useEffect(() => {
    const id = props.conversationId;
    if (id === undefined) {
      if (shown.current !== undefined) turns.reset();
      setTitle(null);
      setLoadError(undefined);
      return;
    }
    if (id === shown.current) return;
    turns.reset();
    setTitle(null);
    setLoadError(undefined);
    setTruncated(0);
    setLoading(true);
    const controller = new AbortController();
    loadConversation(id, controller.signal).then(
      ({ conversation, messages, more }) => {
        turns.open(id, messages);
        setTitle(conversation.title);
        setTruncated(more ? messages.length : 0);
        setLoading(false);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setLoadError(error);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [props.conversationId, round]);

  const retry = () => setRound((n) => n + 1);
  if (loadError) return <ErrorView error={loadError} retry={retry} />;

  return (
    <section class="page playground">
      <h1>{t('playground.title')}</h1>
      <div class="toolbar">
        {title ? <p class="conversation-title">{title}</p> : null}
        <button type="button" onClick={() => navigate('/playground')} disabled={turns.streaming}>
          {t('playground.newChat')}
        </button>
        <Link href="/conversations">{t('playground.allConversations')}</Link>
      </div>
      <div class="row playground-options">
        <ModelPicker value={model} onChange={setModel} />
        <ScopePicker value={scope} onChange={setScope} />
      </div>
      {loading ? (
        <p class="muted" role="status">
          {t('playground.loading')}
        </p>
      ) : null}
      {truncated ? <p class="muted">{t('playground.moreMessages', { count: truncated })}</p> : null}
      {!loading && turns.messages.length === 0 ? <p class="muted">{t('playground.empty')}</p> : null}
      <Transcript messages={turns.messages} streamingId={turns.streamingId} />
      <Composer
        busy={turns.streaming || loading}
        streaming={turns.streaming}
        onSend={turns.send}
        onStop={turns.stop}
        error={turns.error}
        draft={turns.draft}
        setDraft={turns.setDraft}
      />
    </section>
  );
}

async function loadConversation(id: string, signal: AbortSignal) {
  const path = `/api/llm/v1/conversations/${encodeURIComponent(id)}`;
  let conversation = await api<ConversationWithMessages>(path, { query: { limit: 100 }, signal });
  const messages: Message[] = [...conversation.messages.data];
  let next = conversation.messages.next;
  for (let page = 1; next && page < MAX_PAGES; page++) {
    conversation = await api<ConversationWithMessages>(path, { query: { limit: 100, after: next }, signal });
    messages.push(...conversation.messages.data);
    next = conversation.messages.next;
  }
  return { conversation, messages, more: Boolean(next) };
}
