// A search's answer as grounding would use it: what happened (status), how it ran
// (mode, embedder, reranker), then the ranked passages with score and source. Passage
// text, names and headings are rendered as text, never as HTML.
import type { Static } from '@fastify/type-provider-typebox';
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { SearchResponse } from '../../../../src/areas/os/retrieval/schemas.js';
import { t } from '../../i18n/index.js';
import { formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';

export type SearchAnswer = Static<typeof SearchResponse>;

export function statusText(answer: SearchAnswer): string {
  return answer.status === 'active' ? t('retrieval.status.active', { count: answer.data.length }) : t(`retrieval.status.${answer.status}`);
}

export function Results(props: { answer: SearchAnswer; collections: Map<string, Collection> }) {
  const { answer } = props;
  const { retrieval } = answer;
  return (
    <section aria-labelledby="retrieval-results" class="stack">
      <h2 id="retrieval-results">{t('retrieval.results')}</h2>
      <p>
        <span class={`badge ${answer.status === 'active' ? 'ok' : 'warn'}`}>{answer.status}</span> {statusText(answer)}
      </p>
      <ul class="retrieval-facts" aria-label={t('retrieval.howItRan')}>
        <li>{t('retrieval.mode', { mode: retrieval.mode })}</li>
        <li>{t('retrieval.embedder', { embedder: retrieval.embedder ?? t('retrieval.noEmbedder') })}</li>
        <li>
          {t('retrieval.reranker', {
            reranker: retrieval.reranker ? t(`retrieval.reranker.${retrieval.reranker}`) : t('retrieval.rerankerNone'),
          })}
        </li>
      </ul>
      {retrieval.note ? <p class="muted">{t('retrieval.note', { note: retrieval.note })}</p> : null}
      {answer.data.length ? (
        <ol class="passages" aria-label={t('retrieval.passages')}>
          {answer.data.map((snippet, index) => {
            const source = snippet.source;
            const where = [...(source.headingPath ?? [])].join(' › ');
            return (
              <li key={snippet.id} class="card">
                <h3>
                  {t('retrieval.rank', { rank: index + 1 })}{' '}
                  <Link href={`/documents/${encodeURIComponent(snippet.documentId)}`}>{snippet.documentName}</Link>
                </h3>
                <p class="passage-meta muted">
                  {t('retrieval.score', { score: snippet.score.toFixed(3) })} ·{' '}
                  {t('retrieval.collection', { name: props.collections.get(snippet.collectionId)?.name ?? snippet.collectionId })} ·{' '}
                  {t('retrieval.chunk', { index: formatNumber(snippet.chunkIndex) })}
                  {where ? ` · ${where}` : ''}
                  {source.page !== undefined ? ` · ${t('retrieval.page', { page: source.page })}` : ''}
                </p>
                <p class="passage-text pre-text">{snippet.content}</p>
              </li>
            );
          })}
        </ol>
      ) : null}
    </section>
  );
}
