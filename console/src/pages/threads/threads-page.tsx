// The caller's threads (Assistants API, `GET /api/llm/v1/threads`, an extension),
// and one thread's messages and runs: a read-only viewer.
import type { ThreadObject } from '../../../../src/areas/llm/threads/objects.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { fromSeconds, useOpenAiList } from './openai-list.js';
import { metadataText, scopeText } from './thread-format.js';
import { ThreadView } from './thread-view.js';

export function ThreadsPage(props: { threadId?: string | undefined }) {
  return props.threadId ? <ThreadView threadId={props.threadId} /> : <ThreadList />;
}

function ThreadList() {
  const { page, pager } = useOpenAiList<ThreadObject>('/api/llm/v1/threads', { limit: 20 }, t('threads.pages'));
  const rows = page.data?.data ?? [];
  return (
    <section class="page">
      <h1>{t('threads.title')}</h1>
      <p class="muted">{t('threads.intro')}</p>
      {page.error ? <ErrorView error={page.error} retry={page.reload} /> : null}
      <div class="table-wrap">
        <table aria-busy={page.loading}>
          <thead>
            <tr>
              <th scope="col">{t('threads.colThread')}</th>
              <th scope="col">{t('common.created')}</th>
              <th scope="col">{t('threads.colScope')}</th>
              <th scope="col">{t('threads.colMetadata')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((thread) => (
              <tr key={thread.id}>
                <th scope="row">
                  <Link href={`/threads/${encodeURIComponent(thread.id)}`} class="mono">
                    {thread.id}
                  </Link>
                </th>
                <td>{formatDate(fromSeconds(thread.created_at))}</td>
                <td>{scopeText(thread)}</td>
                <td class="mono">{metadataText(thread.metadata)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!page.loading && !page.error && rows.length === 0 ? <p class="muted">{t('threads.empty')}</p> : null}
      {pager}
    </section>
  );
}
