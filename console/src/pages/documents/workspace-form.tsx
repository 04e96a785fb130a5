// The create / edit dialog of a workspace: name and description. What was typed stays
// in the form when the API refuses it.
import type { Workspace } from '../../../../src/areas/os/workspaces/schemas.js';
import { useState } from 'preact/hooks';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';

export function WorkspaceForm(props: {
  open: boolean;
  /** Absent: a new workspace. */
  workspace?: Workspace | undefined;
  onClose: () => void;
  onSaved: (workspace: Workspace) => void;
}) {
  const editing = props.workspace;
  return (
    <Dialog
      title={editing ? t('documents.workspaceEditTitle') : t('documents.workspaceCreateTitle')}
      open={props.open}
      onClose={props.onClose}
    >
      <Fields key={editing?.id ?? 'new'} {...props} />
    </Dialog>
  );
}

function Fields(props: { workspace?: Workspace | undefined; onClose: () => void; onSaved: (workspace: Workspace) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description')).trim();
    setBusy(true);
    setError('');
    try {
      const saved = props.workspace
        ? await api<Workspace>(`/api/os/workspaces/${encodeURIComponent(props.workspace.id)}`, {
            method: 'PATCH',
            body: { name, description: description || null },
          })
        : await api<Workspace>('/api/os/workspaces', { method: 'POST', body: description ? { name, description } : { name } });
      props.onSaved(saved);
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('documents.workspaceName')}
        <input name="name" required maxLength={200} defaultValue={props.workspace?.name ?? ''} />
      </label>
      <label>
        {t('documents.description')}
        <textarea name="description" maxLength={2000} defaultValue={props.workspace?.description ?? ''} />
      </label>
      <FormFooter
        error={error}
        submitLabel={props.workspace ? t('common.save') : t('documents.workspaceCreate')}
        disabled={busy}
        onCancel={props.onClose}
      />
    </form>
  );
}
