// Create a tenant: POST /tenants takes only its name, so the optional first admin is a
// second call (POST /tenants/{id}/users with the admin role, which a platform admin may
// make for any tenant). If that one fails, the tenant is kept and the form retries only
// the admin, so nothing the user typed is lost and no second tenant is made.
import { useState } from 'preact/hooks';
import type { Tenant } from '../../../../src/areas/auth/tenants/schemas.js';
import type { NewUserBody, User } from '../../../../src/areas/auth/users/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';

export function CreateTenantDialog(props: { open: boolean; onClose: () => void; onCreated: () => void }) {
  return (
    <Dialog title={t('tenants.form.title')} open={props.open} onClose={props.onClose}>
      <CreateTenantForm onCreated={props.onCreated} />
    </Dialog>
  );
}

function CreateTenantForm(props: { onCreated: () => void }) {
  const [created, setCreated] = useState<Tenant | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const username = String(form.get('adminUsername')).trim();
    const email = String(form.get('adminEmail')).trim();
    const password = String(form.get('adminPassword'));
    setBusy(true);
    setError('');
    let tenant = created;
    try {
      tenant ??= await api<Tenant>('/api/auth/tenants', { method: 'POST', body: { name: String(form.get('name')).trim() } });
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
      return;
    }
    if (username) {
      const body: NewUserBody = { username, password, roles: ['admin'], ...(email ? { email } : {}) };
      try {
        await api<User>(`/api/auth/tenants/${encodeURIComponent(tenant.id)}/users`, { method: 'POST', body });
      } catch (failure) {
        setCreated(tenant);
        setError(t('tenants.form.createdNoAdmin', { name: tenant.name, detail: problemText(failure) }));
        setBusy(false);
        return;
      }
      announce(t('tenants.createdWithAdmin', { name: tenant.name, username }));
    } else announce(t('tenants.created', { name: tenant.name }));
    props.onCreated();
  };
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('tenants.form.name')}
        <input name="name" required maxLength={200} autocomplete="off" readOnly={created !== null} />
      </label>
      <fieldset class="stack">
        <legend>{t('tenants.form.admin')}</legend>
        <p class="muted">{t('tenants.form.adminHelp')}</p>
        <AdminFields required={created !== null} />
      </fieldset>
      <p role="alert" class="form-error">
        {error}
      </p>
      <button type="submit" class="primary" disabled={busy}>
        {created ? t('tenants.form.retryAdmin') : t('tenants.form.submit')}
      </button>
    </form>
  );
}

function AdminFields(props: { required: boolean }) {
  // The password is needed as soon as a username is given; the browser checks both.
  const [username, setUsername] = useState('');
  const needed = props.required || username.trim() !== '';
  return (
    <>
      <label>
        {t('tenants.form.adminUsername')}
        <input
          name="adminUsername"
          required={needed}
          pattern="[A-Za-z0-9][A-Za-z0-9._\-]{1,63}"
          autocomplete="off"
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </label>
      <label>
        {t('tenants.form.adminEmail')}
        <input name="adminEmail" type="email" maxLength={254} autocomplete="off" />
      </label>
      <label>
        {t('tenants.form.adminPassword')}
        <input name="adminPassword" type="password" minLength={12} maxLength={256} required={needed} autocomplete="new-password" />
      </label>
    </>
  );
}
