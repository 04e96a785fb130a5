// /workspaces/:workspaceId: one workspace and its collections. Tenant admins create,
// edit and delete collections (the default collection goes only with its workspace).
// An id that is not the tenant's is a 404 from the API, shown as "not found".
import { useState } from 'preact/hooks';
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { Workspace } from '../../../../src/areas/os/workspaces/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { announce } from '../../ui/notices.js';
import { useLoad } from '../../ui/use-load.js';
import { CollectionForm } from './collection-form.js';
import { ConfirmDelete, isTenantAdmin } from './shared.js';

export function WorkspacePage(props: { workspaceId: string }) {
  const id = encodeURIComponent(props.workspaceId);
  const workspace = useLoad((signal) => api<Workspace>(`/api/os/workspaces/${id}`, { signal }), [id]);
  if (workspace.error) return <ErrorView error={workspace.error} retry={workspace.reload} />;
  if (!workspace.data) return <p class="muted">{t('app.loading')}</p>;
  return <Collections workspace={workspace.data} />;
}

function Collections(props: { workspace: Workspace }) {
  const admin = isTenantAdmin();
  const id = encodeURIComponent(props.workspace.id);
  const list = useLoad((signal) => api<{ data: Collection[] }>(`/api/os/workspaces/${id}/collections`, { signal }), [id]);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Collection | null>(null);
  const [deleting, setDeleting] = useState<Collection | null>(null);
  const rows = list.data?.data ?? [];
  const remove = async () => {
    if (!deleting) return;
    await api(`/api/os/collections/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
    announce(t('documents.collectionDeleted', { name: deleting.name }));
    setDeleting(null);
    list.reload();
  };
  return (
    <section class="page">
      <p>
        <Link href="/workspaces">{t('documents.backToWorkspaces')}</Link>
      </p>
      <h1>{t('documents.workspaceTitle', { name: props.workspace.name })}</h1>
      {props.workspace.description ? <p class="muted">{props.workspace.description}</p> : null}
      <h2>{t('documents.collectionsTitle')}</h2>
      {admin ? (
        <div class="toolbar">
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            {t('documents.collectionNew')}
          </button>
        </div>
      ) : null}
      {list.error ? <ErrorView error={list.error} retry={list.reload} /> : null}
      <div class="table-wrap">
        <table aria-busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">{t('common.name')}</th>
              <th scope="col">{t('documents.documentsCount')}</th>
              <th scope="col">{t('documents.chunks')}</th>
              <th scope="col">{t('documents.language')}</th>
              <th scope="col">{t('documents.embedder')}</th>
              <th scope="col">{t('documents.reranker')}</th>
              {admin ? <th scope="col">{t('common.actions')}</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((collection) => (
              <tr key={collection.id}>
                <th scope="row">
                  <Link href={`/collections/${encodeURIComponent(collection.id)}`}>{collection.name}</Link>
                  {collection.isDefault ? <span class="muted"> {t('documents.defaultCollection')}</span> : null}
                </th>
                <td>{formatNumber(collection.documentCount)}</td>
                <td>{formatNumber(collection.chunkCount)}</td>
                <td class="mono">{collection.language}</td>
                <td class="mono">
                  {collection.embedding?.model ?? t('documents.lexicalOnly')}
                  {collection.pendingEmbeddingModel ? (
                    <span class="muted"> {t('documents.pendingEmbedder', { model: collection.pendingEmbeddingModel })}</span>
                  ) : null}
                </td>
                <td class="mono">{collection.rerankModel ?? t('documents.none')}</td>
                {admin ? (
                  <td>
                    <div class="row">
                      <button
                        type="button"
                        onClick={() => setEditing(collection)}
                        aria-label={t('documents.editNamed', { name: collection.name })}
                      >
                        {t('documents.edit')}
                      </button>
                      {collection.isDefault ? null : (
                        <button
                          type="button"
                          class="danger"
                          onClick={() => setDeleting(collection)}
                          aria-label={t('documents.deleteNamed', { name: collection.name })}
                        >
                          {t('common.delete')}
                        </button>
                      )}
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!list.loading && !list.error && rows.length === 0 ? <p class="muted">{t('common.empty')}</p> : null}
      <CollectionForm
        open={creating || editing !== null}
        workspaceId={props.workspace.id}
        collection={editing ?? undefined}
        onClose={() => {
          setCreating(false);
          setEditing(null);
        }}
        onSaved={(saved) => {
          announce(editing ? t('common.saved') : t('documents.collectionCreated', { name: saved.name }));
          setCreating(false);
          setEditing(null);
          list.reload();
        }}
      />
      <ConfirmDelete name={deleting?.name ?? null} onCancel={() => setDeleting(null)} onDelete={remove} />
    </section>
  );
}
