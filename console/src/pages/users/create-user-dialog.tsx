// "Create user": username, optional e-mail (and whether the administrator vouches for
// it), password and role, POSTed as NewUserBody.
// A 409 (username or e-mail taken) or a 400 naming a field shows in the form's alert,
// and everything typed stays.
import { useState } from 'preact/hooks';
import type { NewUserBody, User } from '../../../../src/areas/auth/users/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';
import { announce } from '../../ui/notices.js';
import { type OfferedRole, rolesFor } from './roles.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, RoleSelect } from './user-fields.js';

export function CreateUserDialog(props: { usersPath: string; open: boolean; onClose: () => void; onCreated: () => void }) {
  return (
    <Dialog title={t('users.createTitle')} open={props.open} onClose={props.onClose}>
      <CreateUser {...props} />
    </Dialog>
  );
}

function CreateUser(props: { usersPath: string; onClose: () => void; onCreated: () => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [hasEmail, setHasEmail] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '');
    const body: NewUserBody = {
      username: text('username').trim(),
      password: text('password'),
      roles: rolesFor(text('role') as OfferedRole),
    };
    if (text('email').trim()) {
      body.email = text('email').trim();
      if (form.get('emailVerified') === 'on') body.emailVerified = true;
    }
    setBusy(true);
    setError('');
    try {
      const user = await api<User>(props.usersPath, { method: 'POST', body });
      announce(t('users.created', { username: user.username }));
      props.onCreated();
      props.onClose();
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('users.username')}
        <input
          name="username"
          required
          maxLength={64}
          autocomplete="off"
          autocapitalize="none"
          spellcheck={false}
          aria-describedby="new-user-username-hint"
        />
      </label>
      <p id="new-user-username-hint" class="muted field-hint">
        {t('users.usernameHint')}
      </p>
      <label>
        {t('users.email')}
        <input
          name="email"
          type="email"
          autocomplete="off"
          maxLength={254}
          onInput={(event) => setHasEmail(event.currentTarget.value.trim() !== '')}
        />
      </label>
      <label class="inline">
        <input name="emailVerified" type="checkbox" disabled={!hasEmail} aria-describedby="new-user-verified-hint" />
        {t('users.emailVerified')}
      </label>
      <p id="new-user-verified-hint" class="muted field-hint">
        {t('users.emailVerifiedHint')}
      </p>
      <label>
        {t('users.password')}
        <input
          name="password"
          type="password"
          required
          minLength={PASSWORD_MIN_LENGTH}
          maxLength={PASSWORD_MAX_LENGTH}
          autocomplete="new-password"
          aria-describedby="new-user-password-hint"
        />
      </label>
      <p id="new-user-password-hint" class="muted field-hint">
        {t('users.passwordHint', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })}
      </p>
      <RoleSelect idPrefix="new-user" initial="member" />
      <FormFooter
        error={error}
        submitLabel={busy ? t('users.creating') : t('users.submitCreate')}
        disabled={busy}
        onCancel={props.onClose}
      />
    </form>
  );
}
