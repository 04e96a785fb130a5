// /documents/:documentId: one document's record and its chunks as retrieval sees them
// (paged, searchable by content). While it is still being processed the record is
// fetched again every 1.5 s. Chunk text is shown as text, never as HTML.
import { useEffect } from 'preact/hooks';
import type { Chunk, Document } from '../../../../src/areas/os/documents/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { formatDate, formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { PagedTable } from '../../ui/paged-table.js';
import { useLoad } from '../../ui/use-load.js';
import { typeName } from './document-columns.js';
import { StatusBadge, formatBytes, isSettled } from './shared.js';
import './documents.css';

export function DocumentPage(props: { documentId: string }) {
  const id = encodeURIComponent(props.documentId);
  const record = useLoad((signal) => api<Document>(`/api/os/documents/${id}`, { signal }), [id]);
  const document = record.data;
  useEffect(() => {
    if (!document || isSettled(document)) return;
    const timer = setTimeout(record.reload, 1500);
    return () => clearTimeout(timer);
  }, [document]);
  if (record.error && !document) return <ErrorView error={record.error} retry={record.reload} />;
  if (!document) return <p class="muted">{t('app.loading')}</p>;
  return (
    <section class="page">
      <p>
        <Link href={`/collections/${encodeURIComponent(document.collectionId)}`}>{t('documents.backToCollection')}</Link>
      </p>
      <h1>{t('documents.documentTitle', { name: document.name })}</h1>
      <dl class="record">
        <dt>{t('common.status')}</dt>
        <dd>
          <StatusBadge document={document} />
          {document.error ? <span class={document.status === 'failed' ? 'failure-reason' : 'muted'}>{document.error}</span> : null}
        </dd>
        <dt>{t('documents.type')}</dt>
        <dd>{typeName(document.mediaType)}</dd>
        <dt>{t('documents.size')}</dt>
        <dd>{formatBytes(document.bytes)}</dd>
        <dt>{t('documents.chunks')}</dt>
        <dd>{formatNumber(document.chunkCount)}</dd>
        <dt>{t('documents.sha256')}</dt>
        <dd class="mono">{document.sha256}</dd>
        <dt>{t('common.created')}</dt>
        <dd>{formatDate(document.createdAt)}</dd>
        <dt>{t('documents.updated')}</dt>
        <dd>{formatDate(document.updatedAt)}</dd>
        {Object.keys(document.metadata).length ? (
          <>
            <dt>{t('documents.metadata')}</dt>
            <dd>
              <pre>{JSON.stringify(document.metadata, null, 2)}</pre>
            </dd>
          </>
        ) : null}
      </dl>
      <h2>{t('documents.chunksTitle')}</h2>
      <PagedTable<Chunk>
        path={`/api/os/documents/${id}/chunks`}
        label={t('documents.chunksLabel')}
        rowKey={(chunk) => chunk.id}
        version={document.status === 'ready' ? 1 : 0}
        columns={[
          { header: t('documents.chunkIndex'), rowHeader: true, cell: (chunk) => formatNumber(chunk.chunkIndex) },
          {
            header: t('documents.chunkSource'),
            cell: (chunk) => (
              <>
                {chunk.headingPath.length ? chunk.headingPath.join(' › ') : chunk.title}
                {chunk.page !== null ? <span class="muted"> {t('documents.page', { page: chunk.page })}</span> : null}
              </>
            ),
          },
          { header: t('documents.chunkText'), cell: (chunk) => <p class="chunk-text pre-text">{chunk.content}</p> },
          { header: t('documents.tokens'), cell: (chunk) => formatNumber(chunk.tokenCount) },
        ]}
      />
    </section>
  );
}
