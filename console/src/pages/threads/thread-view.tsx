// One thread: its messages, oldest first (their `[n]` citations linked to the cited
// document), and its runs with their status. Another owner's thread is a 404: "not found".
import type { MessageObject, ThreadObject } from '../../../../src/areas/llm/threads/objects.js';
import type { RunObject } from '../../../../src/areas/llm/thread-runs/objects.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { formatDate, formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { useLoad } from '../../ui/use-load.js';
import { fromSeconds, useOpenAiList } from './openai-list.js';
import { metadataText, scopeText } from './thread-format.js';
import './threads.css';

export function ThreadView(props: { threadId: string }) {
  const path = `/api/llm/v1/threads/${encodeURIComponent(props.threadId)}`;
  const thread = useLoad((signal) => api<ThreadObject>(path, { signal }), [path]);
  if (thread.error) return <ErrorView error={thread.error} retry={thread.reload} />;
  return (
    <section class="page">
      <p>
        <Link href="/threads">{t('threads.back')}</Link>
      </p>
      <h1>{t('threads.threadTitle', { id: props.threadId })}</h1>
      {thread.data ? (
        <dl class="thread-facts">
          <dt>{t('common.created')}</dt>
          <dd>{formatDate(fromSeconds(thread.data.created_at))}</dd>
          <dt>{t('threads.colScope')}</dt>
          <dd>{scopeText(thread.data)}</dd>
          <dt>{t('threads.colMetadata')}</dt>
          <dd class="mono">{metadataText(thread.data.metadata)}</dd>
        </dl>
      ) : (
        <p class="muted">{t('app.loading')}</p>
      )}
      {thread.data ? (
        <>
          <Messages path={`${path}/messages`} />
          <Runs path={`${path}/runs`} />
        </>
      ) : null}
    </section>
  );
}

function Messages(props: { path: string }) {
  const { page, pager } = useOpenAiList<MessageObject>(props.path, { limit: 50, order: 'asc' }, t('threads.messagePages'));
  const rows = page.data?.data ?? [];
  return (
    <>
      <h2>{t('threads.messages')}</h2>
      {page.error ? <ErrorView error={page.error} retry={page.reload} /> : null}
      {!page.loading && !page.error && rows.length === 0 ? <p class="muted">{t('threads.noMessages')}</p> : null}
      <ol class="thread-messages" aria-busy={page.loading}>
        {rows.map((message) => (
          <li key={message.id} class={`thread-message thread-${message.role}`}>
            <p class="muted thread-who">
              {message.role === 'user' ? t('threads.user') : t('threads.assistant')} · {formatDate(fromSeconds(message.created_at))}
              {message.run_id ? <span class="mono"> · {message.run_id}</span> : null}{' '}
              {message.status !== 'completed' ? <span class="badge warn">{statusWord(message)}</span> : null}
            </p>
            {message.content.map((part, i) => (
              <div key={i} class="pre-text">
                {part.text.value}
              </div>
            ))}
            <Citations message={message} />
          </li>
        ))}
      </ol>
      {pager}
    </>
  );
}

function statusWord(message: MessageObject): string {
  return message.incomplete_details ? `${message.status}: ${message.incomplete_details.reason}` : message.status;
}

function Citations(props: { message: MessageObject }) {
  const citations = props.message.content.flatMap((part) => part.text.annotations);
  if (citations.length === 0) return null;
  return (
    <div>
      <p class="muted thread-who">{t('threads.citations')}</p>
      <ul class="thread-citations">
        {citations.map((citation) => (
          <li key={`${citation.start_index}`}>
            <Link href={`/documents/${encodeURIComponent(citation.file_citation.file_id)}`}>
              {t('threads.citation', { marker: citation.text, id: citation.file_citation.file_id })}
            </Link>
          </li>
        ))}
      </ul>
    </div>
  );
}

const RUN_TONE: Record<RunObject['status'], 'ok' | 'warn' | 'bad'> = {
  completed: 'ok',
  queued: 'warn',
  in_progress: 'warn',
  cancelling: 'warn',
  incomplete: 'warn',
  failed: 'bad',
  cancelled: 'bad',
  expired: 'bad',
};

function Runs(props: { path: string }) {
  const { page, pager } = useOpenAiList<RunObject>(props.path, { limit: 20 }, t('threads.runPages'));
  const rows = page.data?.data ?? [];
  return (
    <>
      <h2>{t('threads.runs')}</h2>
      {page.error ? <ErrorView error={page.error} retry={page.reload} /> : null}
      {!page.loading && !page.error && rows.length === 0 ? (
        <p class="muted">{t('threads.noRuns')}</p>
      ) : (
        <div class="table-wrap">
          <table aria-busy={page.loading}>
            <thead>
              <tr>
                <th scope="col">{t('threads.colRun')}</th>
                <th scope="col">{t('common.status')}</th>
                <th scope="col">{t('threads.colModel')}</th>
                <th scope="col">{t('common.created')}</th>
                <th scope="col">{t('threads.colTokens')}</th>
                <th scope="col">{t('threads.colProblem')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((run) => (
                <tr key={run.id}>
                  <th scope="row" class="mono">
                    {run.id}
                  </th>
                  <td>
                    <span class={`badge ${RUN_TONE[run.status]}`}>{run.status}</span>
                  </td>
                  <td>{run.model}</td>
                  <td>{formatDate(fromSeconds(run.created_at))}</td>
                  <td>{run.usage ? formatNumber(run.usage.total_tokens) : '—'}</td>
                  <td>{run.last_error?.message ?? run.incomplete_details?.reason ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pager}
    </>
  );
}
