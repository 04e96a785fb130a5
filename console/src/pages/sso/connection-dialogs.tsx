// The dialogs of the single sign-on page: add or edit a connection (after an add, the
// URLs to enter at the IdP), turn one on or off, delete one.
import { useState } from 'preact/hooks';
import type { SsoConnection } from '../../../../src/areas/auth/sso/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ConfirmDialog } from '../../ui/confirm-dialog.js';
import { Dialog } from '../../ui/dialog.js';
import { announce } from '../../ui/notices.js';
import { ConnectionForm } from './connection-form.js';
import { ConnectionUrls } from './connection-urls.js';

/** target: null closed, 'new' an add, else the connection to edit. */
export function ConnectionDialog(props: {
  base: string;
  target: SsoConnection | 'new' | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { target } = props;
  const title = target === 'new' || target === null ? t('sso.dialog.createTitle') : t('sso.dialog.editTitle', { name: target.name });
  return (
    <Dialog title={title} open={target !== null} onClose={props.onClose}>
      {target !== null ? <ConnectionDialogBody key={target === 'new' ? 'new' : target.id} {...props} target={target} /> : null}
    </Dialog>
  );
}

function ConnectionDialogBody(props: { base: string; target: SsoConnection | 'new'; onClose: () => void; onChanged: () => void }) {
  const [created, setCreated] = useState<SsoConnection | null>(null);
  if (created)
    return (
      <div class="stack">
        <p class="warning-note" id="sso-created-note">
          {t('sso.dialog.createdNote', { name: created.name })}
        </p>
        <ConnectionUrls connection={created} hint />
        <div class="row">
          <button type="button" class="primary" onClick={props.onClose}>
            {t('sso.dialog.done')}
          </button>
        </div>
      </div>
    );
  return (
    <ConnectionForm
      base={props.base}
      {...(props.target === 'new' ? {} : { current: props.target })}
      onCancel={props.onClose}
      onNothingChanged={() => {
        announce(t('sso.nothingChanged'));
        props.onClose();
      }}
      onSaved={(connection, isNew) => {
        props.onChanged();
        if (isNew) {
          announce(t('sso.created', { name: connection.name }));
          setCreated(connection);
        } else {
          announce(t('sso.saved', { name: connection.name }));
          props.onClose();
        }
      }}
    />
  );
}

const pathOf = (base: string, connection: SsoConnection) => `${base}/${encodeURIComponent(connection.id)}`;

/** Turns a connection on or off: either changes who may sign in how, so it is confirmed. */
export function ToggleDialog(props: { base: string; target: SsoConnection | null; onClose: () => void; onChanged: () => void }) {
  const connection = props.target;
  const enabling = connection ? !connection.enabled : false;
  const confirm = async () => {
    if (!connection) return;
    await api<SsoConnection>(pathOf(props.base, connection), { method: 'PATCH', body: { enabled: enabling } });
    announce(t(enabling ? 'sso.enabled' : 'sso.disabled', { name: connection.name }));
    props.onChanged();
    props.onClose();
  };
  const name = connection?.name ?? '';
  return (
    <ConfirmDialog
      title={enabling ? t('sso.toggle.enableTitle', { name }) : t('sso.toggle.disableTitle', { name })}
      open={connection !== null}
      message={
        <>
          <p>{t(enabling ? 'sso.toggle.enableText' : 'sso.toggle.disableText')}</p>
          {connection?.ssoOnly ? <p class="muted">{t(enabling ? 'sso.toggle.enableSsoOnly' : 'sso.toggle.disableSsoOnly')}</p> : null}
        </>
      }
      confirmLabel={t(enabling ? 'sso.enable' : 'sso.disable')}
      tone={enabling ? 'primary' : 'danger'}
      onConfirm={confirm}
      onClose={props.onClose}
    />
  );
}

export function DeleteConnectionDialog(props: { base: string; target: SsoConnection | null; onClose: () => void; onChanged: () => void }) {
  const connection = props.target;
  const remove = async () => {
    if (!connection) return;
    await api(pathOf(props.base, connection), { method: 'DELETE' });
    announce(t('sso.deleted', { name: connection.name }));
    props.onChanged();
    props.onClose();
  };
  return (
    <ConfirmDialog
      title={t('sso.deleteTitle')}
      open={connection !== null}
      message={
        <>
          <p>{t('common.confirmDelete', { name: connection?.name ?? '' })}</p>
          <p class="muted">{t('sso.deleteWarning')}</p>
        </>
      }
      confirmLabel={t('sso.deleteConfirm')}
      onConfirm={remove}
      onClose={props.onClose}
    />
  );
}
