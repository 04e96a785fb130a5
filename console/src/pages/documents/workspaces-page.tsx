// /workspaces: the tenant's workspaces, each linking to its collections. Tenant admins
// create, rename and delete them (the API refuses anyone else anyway).
import { useState } from 'preact/hooks';
import type { Workspace } from '../../../../src/areas/os/workspaces/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { announce } from '../../ui/notices.js';
import { useLoad } from '../../ui/use-load.js';
import { ConfirmDelete, isTenantAdmin } from './shared.js';
import { WorkspaceForm } from './workspace-form.js';

export function WorkspacesPage() {
  const admin = isTenantAdmin();
  const list = useLoad((signal) => api<{ data: Workspace[] }>('/api/os/workspaces', { signal }), []);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Workspace | null>(null);
  const [deleting, setDeleting] = useState<Workspace | null>(null);
  const rows = list.data?.data ?? [];
  const remove = async () => {
    if (!deleting) return;
    await api(`/api/os/workspaces/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
    announce(t('documents.workspaceDeleted', { name: deleting.name }));
    setDeleting(null);
    list.reload();
  };
  return (
    <section class="page">
      <h1>{t('documents.workspacesTitle')}</h1>
      <p class="muted">{t('documents.workspacesIntro')}</p>
      {admin ? (
        <div class="toolbar">
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            {t('documents.workspaceNew')}
          </button>
        </div>
      ) : null}
      {list.error ? <ErrorView error={list.error} retry={list.reload} /> : null}
      <div class="table-wrap">
        <table aria-busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">{t('common.name')}</th>
              <th scope="col">{t('documents.description')}</th>
              <th scope="col">{t('common.created')}</th>
              {admin ? <th scope="col">{t('common.actions')}</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((workspace) => (
              <tr key={workspace.id}>
                <th scope="row">
                  <Link href={`/workspaces/${encodeURIComponent(workspace.id)}`}>{workspace.name}</Link>
                </th>
                <td>{workspace.description ?? ''}</td>
                <td>{formatDate(workspace.createdAt)}</td>
                {admin ? (
                  <td>
                    <div class="row">
                      <button
                        type="button"
                        onClick={() => setEditing(workspace)}
                        aria-label={t('documents.renameNamed', { name: workspace.name })}
                      >
                        {t('documents.rename')}
                      </button>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => setDeleting(workspace)}
                        aria-label={t('documents.deleteNamed', { name: workspace.name })}
                      >
                        {t('common.delete')}
                      </button>
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!list.loading && !list.error && rows.length === 0 ? <p class="muted">{t('documents.noWorkspaces')}</p> : null}
      <WorkspaceForm
        open={creating || editing !== null}
        workspace={editing ?? undefined}
        onClose={() => {
          setCreating(false);
          setEditing(null);
        }}
        onSaved={(saved) => {
          announce(editing ? t('common.saved') : t('documents.workspaceCreated', { name: saved.name }));
          setCreating(false);
          setEditing(null);
          list.reload();
        }}
      />
      <ConfirmDelete name={deleting?.name ?? null} onCancel={() => setDeleting(null)} onDelete={remove} />
    </section>
  );
}
