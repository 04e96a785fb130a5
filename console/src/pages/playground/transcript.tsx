// The conversation as it reads: each message as text (model output is never HTML), an
// answer's grounding sources as numbered buttons [1] [2] under it (`[n]` in the answer
// is rag_snippets[n-1]), and a dialog showing the passage a source stands for.
import { useState } from 'preact/hooks';
import type { Snippet } from '../../../../src/areas/grounding.js';
import type { Message } from '../../../../src/areas/llm/conversations/schemas.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';

interface Opened {
  snippet: Snippet;
  n: number;
}

export function Transcript(props: { messages: Message[]; streamingId: string | null }) {
  const [opened, setOpened] = useState<Opened | null>(null);
  return (
    <>
      <ol class="chat-log" aria-label={t('playground.transcript')}>
        {props.messages
          .filter((message) => message.role !== 'system')
          .map((message) => (
            <MessageItem key={message.id} message={message} streaming={message.id === props.streamingId} onOpen={setOpened} />
          ))}
      </ol>
      <Dialog
        title={opened ? t('playground.sourceTitle', { n: opened.n, name: opened.snippet.documentName }) : t('playground.sources')}
        open={opened !== null}
        onClose={() => setOpened(null)}
      >
        {opened ? <Passage snippet={opened.snippet} /> : null}
      </Dialog>
    </>
  );
}

function MessageItem(props: { message: Message; streaming: boolean; onOpen: (opened: Opened) => void }) {
  const { message } = props;
  const mine = message.role === 'user';
  const who = mine
    ? t('playground.you')
    : message.model
      ? t('playground.assistantModel', { model: message.model })
      : t('playground.assistant');
  const snippets = message.rag_snippets ?? [];
  return (
    <li class={mine ? 'msg msg-user' : 'msg msg-assistant'}>
      <p class="msg-who muted">{who}</p>
      {mine ? (
        <div class="pre-text">{message.content}</div>
      ) : (
        // Filled token by token; aria-busy holds screen readers back until the answer is whole,
        // so they read it once rather than in fragments.
        <div class="pre-text" aria-live="polite" aria-busy={props.streaming}>
          {message.content}
        </div>
      )}
      {props.streaming && message.content === '' ? <p class="muted">{t('playground.thinking')}</p> : null}
      {message.status === 'incomplete' ? <p class="badge warn">{incompleteText(message.incompleteReason)}</p> : null}
      {snippets.length > 0 ? (
        <div class="sources">
          <p class="muted">{t('playground.sources')}</p>
          <ol class="source-list">
            {snippets.map((snippet, i) => (
              <li key={snippet.id}>
                <button type="button" class="link" onClick={() => props.onOpen({ snippet, n: i + 1 })}>
                  [{i + 1}] {snippet.documentName}
                </button>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      {message.rag_status && message.rag_status !== 'inactive' && message.rag_status !== 'active' ? (
        <p class="muted">{t(`playground.rag.${message.rag_status}`)}</p>
      ) : null}
    </li>
  );
}

function incompleteText(reason: string | undefined): string {
  const key = `playground.incomplete.${reason}`;
  return key in INCOMPLETE ? t(key as MessageKey) : t('playground.incomplete.other', { reason: reason ?? '?' });
}
const INCOMPLETE = {
  'playground.incomplete.max_tokens': true,
  'playground.incomplete.client_disconnected': true,
  'playground.incomplete.run_failed': true,
  'playground.incomplete.run_cancelled': true,
};

function Passage(props: { snippet: Snippet }) {
  const { snippet } = props;
  const section = snippet.source.headingPath?.join(' › ');
  return (
    <div class="stack">
      <dl class="passage-facts">
        <dt>{t('playground.sourceDocument')}</dt>
        <dd>
          {snippet.documentName} <Link href={`/documents/${encodeURIComponent(snippet.documentId)}`}>{t('playground.openDocument')}</Link>
        </dd>
        {section ? (
          <>
            <dt>{t('playground.sourceSection')}</dt>
            <dd>{section}</dd>
          </>
        ) : null}
        {snippet.source.page !== undefined ? (
          <>
            <dt>{t('playground.sourcePage')}</dt>
            <dd>{formatNumber(snippet.source.page)}</dd>
          </>
        ) : null}
        <dt>{t('playground.sourceScore')}</dt>
        <dd>{snippet.score.toFixed(2)}</dd>
      </dl>
      <h3 class="passage-head">{t('playground.sourcePassage')}</h3>
      <blockquote class="passage pre-text">{snippet.content}</blockquote>
    </div>
  );
}
