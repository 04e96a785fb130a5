// The per-key dialogs: confirm a delete, and edit the key's limits (PATCH {limits},
// which replaces what was set: an emptied field removes that limit).
import { useState } from 'preact/hooks';
import type { ApiKeyRecord } from '../../../../src/areas/auth/api-keys/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ConfirmDialog } from '../../ui/confirm-dialog.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';
import { announce } from '../../ui/notices.js';
import { LimitsFields, readLimits } from './limits-fields.js';

interface Props {
  keyPath: (key: ApiKeyRecord) => string;
  /** The key the dialog is for; null: closed. */
  target: ApiKeyRecord | null;
  onClose: () => void;
  onChanged: () => void;
}

export function DeleteKeyDialog(props: Props) {
  const key = props.target;
  const remove = async () => {
    if (!key) return;
    await api(props.keyPath(key), { method: 'DELETE' });
    announce(t('keys.deleted', { name: key.name }));
    props.onChanged();
    props.onClose();
  };
  return (
    <ConfirmDialog
      title={t('keys.deleteTitle')}
      open={key !== null}
      message={
        <>
          <p>{t('common.confirmDelete', { name: key?.name ?? '' })}</p>
          <p class="muted">{t('keys.deleteWarning')}</p>
        </>
      }
      confirmLabel={t('keys.deleteConfirm')}
      onConfirm={remove}
      onClose={props.onClose}
    />
  );
}

export function LimitsDialog(props: Props) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const key = props.target;
  const close = () => {
    setError('');
    props.onClose();
  };
  const save = async (event: Event) => {
    event.preventDefault();
    if (!key) return;
    const limits = readLimits(new FormData(event.currentTarget as HTMLFormElement));
    if ('error' in limits) return setError(limits.error);
    setBusy(true);
    setError('');
    try {
      await api<ApiKeyRecord>(props.keyPath(key), { method: 'PATCH', body: { limits: limits.limits } });
      announce(t('keys.limitsSaved', { name: key.name }));
      props.onChanged();
      close();
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={key ? t('keys.limitsTitle', { name: key.name }) : t('keys.editLimits')} open={key !== null} onClose={close}>
      {key ? (
        <form class="stack" onSubmit={save}>
          <LimitsFields idPrefix="edit-key" initial={key.limits} />
          <FormFooter error={error} submitLabel={t('keys.limitsSave')} disabled={busy} onCancel={close} />
        </form>
      ) : null}
    </Dialog>
  );
}
