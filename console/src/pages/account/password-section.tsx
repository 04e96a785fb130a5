// Change password: the current one, the new one twice (compared here before sending).
// The server ends every other session of the account once it is changed.
import { useRef, useState } from 'preact/hooks';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';

export function PasswordSection(props: { onChanged: () => void }) {
  const [error, setError] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmField = useRef<HTMLInputElement>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const currentPassword = String(form.get('currentPassword'));
    const newPassword = String(form.get('newPassword'));
    if (newPassword !== String(form.get('confirmPassword'))) {
      setMismatch(true);
      setError(t('account.password.mismatch'));
      confirmField.current?.focus();
      return;
    }
    setMismatch(false);
    setBusy(true);
    setError('');
    try {
      await api<void>('/api/auth/password', { method: 'POST', body: { currentPassword, newPassword } });
      formElement.reset();
      announce(t('account.password.changed'));
      props.onChanged();
    } catch (failure) {
      setError(problemText(failure));
    }
    setBusy(false);
  };
  return (
    <section class="card" aria-labelledby="password-title">
      <h2 id="password-title">{t('account.password.title')}</h2>
      <form class="stack" onSubmit={submit}>
        {/* Lets password managers tie the new password to the account. */}
        <input type="hidden" name="username" autocomplete="username" />
        <label>
          {t('account.password.current')}
          <input name="currentPassword" type="password" required maxLength={1024} autocomplete="current-password" />
        </label>
        <label>
          {t('account.password.new')}
          <input
            name="newPassword"
            type="password"
            required
            minLength={12}
            maxLength={256}
            autocomplete="new-password"
            aria-describedby="new-password-help"
          />
        </label>
        <p id="new-password-help" class="muted">
          {t('account.password.newHelp')}
        </p>
        <label>
          {t('account.password.confirm')}
          <input
            ref={confirmField}
            name="confirmPassword"
            type="password"
            required
            minLength={12}
            maxLength={256}
            autocomplete="new-password"
            aria-invalid={mismatch ? 'true' : undefined}
            onInput={() => mismatch && setMismatch(false)}
          />
        </label>
        <p role="alert" class="form-error">
          {error}
        </p>
        <div>
          <button type="submit" class="primary" disabled={busy}>
            {t('account.password.submit')}
          </button>
        </div>
      </form>
    </section>
  );
}
