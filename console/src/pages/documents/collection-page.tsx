// /collections/:collectionId: a collection's documents, paged on the server, with the
// upload zone for tenant admins. While any document on the page is queued or
// processing the page is fetched again every 1.5 s, so statuses reach ready or failed
// live, and each change is announced.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { Document } from '../../../../src/areas/os/documents/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { useLoad } from '../../ui/use-load.js';
import { Link } from '../../ui/link.js';
import { announce } from '../../ui/notices.js';
import { PagedTable } from '../../ui/paged-table.js';
import { documentColumns } from './document-columns.js';
import { ConfirmDelete, isSettled, isTenantAdmin } from './shared.js';
import { UploadZone } from './upload-zone.js';
import './documents.css';

const POLL_MS = 1500;

export function CollectionPage(props: { collectionId: string }) {
  const id = encodeURIComponent(props.collectionId);
  const collection = useLoad((signal) => api<Collection>(`/api/os/collections/${id}`, { signal }), [id]);
  if (collection.error) return <ErrorView error={collection.error} retry={collection.reload} />;
  if (!collection.data) return <p class="muted">{t('app.loading')}</p>;
  return <Documents collection={collection.data} />;
}

function Documents(props: { collection: Collection }) {
  const admin = isTenantAdmin();
  const { collection } = props;
  const [version, setVersion] = useState(0);
  const [deleting, setDeleting] = useState<Document | null>(null);
  /** The last status seen of each document, to announce the moment it changes. */
  const seen = useRef(new Map<string, Document['status']>());
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const onPage = (rows: Document[]) => {
    for (const row of rows) {
      const before = seen.current.get(row.id);
      if (before && before !== row.status && isSettled(row)) {
        if (row.status === 'ready') announce(t('documents.becameReady', { name: row.name }));
        else announce(t('documents.becameFailed', { name: row.name, reason: row.error ?? '' }), 'error');
      }
      seen.current.set(row.id, row.status);
    }
    clearTimeout(timer.current);
    if (rows.some((row) => !isSettled(row))) timer.current = setTimeout(() => setVersion((v) => v + 1), POLL_MS);
  };
  const remove = async () => {
    if (!deleting) return;
    await api(`/api/os/documents/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
    announce(t('documents.documentDeleted', { name: deleting.name }));
    setDeleting(null);
    setVersion((v) => v + 1);
  };
  return (
    <section class="page">
      <p>
        <Link href={`/workspaces/${encodeURIComponent(collection.workspaceId)}`}>{t('documents.backToWorkspace')}</Link>
      </p>
      <h1>{t('documents.collectionTitle', { name: collection.name })}</h1>
      {collection.description ? <p class="muted">{collection.description}</p> : null}
      {admin ? (
        <>
          <h2>{t('documents.uploadTitle')}</h2>
          <UploadZone
            collectionId={collection.id}
            onUploaded={(documents) => {
              for (const document of documents) if (!seen.current.has(document.id)) seen.current.set(document.id, document.status);
              setVersion((v) => v + 1);
            }}
          />
        </>
      ) : null}
      <h2>{t('documents.documentsTitle')}</h2>
      <PagedTable<Document>
        path={`/api/os/collections/${encodeURIComponent(collection.id)}/documents`}
        label={t('documents.documentsLabel')}
        rowKey={(row) => row.id}
        version={version}
        onPage={onPage}
        columns={documentColumns(admin ? setDeleting : undefined)}
      />
      <ConfirmDelete name={deleting?.name ?? null} onCancel={() => setDeleting(null)} onDelete={remove} />
    </section>
  );
}
