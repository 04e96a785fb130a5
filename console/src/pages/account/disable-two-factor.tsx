// Turning two-factor off takes a current code (or a recovery code) or the password.
import { useState } from 'preact/hooks';
import type { DisableBody } from '../../../../src/areas/auth/two-factor/schemas.js';
import { api } from '../../api/client.js';
import { type User, updateUser } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';

export function DisableTwoFactor() {
  const [method, setMethod] = useState<'code' | 'password'>('code');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('secret'));
    const body: DisableBody = method === 'code' ? { code: value.trim() } : { password: value };
    setBusy(true);
    setError('');
    try {
      const user = await api<User>('/api/auth/2fa/disable', { method: 'POST', body });
      announce(t('account.2fa.disabled'));
      updateUser(user);
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
    }
  };
  return (
    <>
      <p>{t('account.2fa.on')}</p>
      <form class="stack" onSubmit={submit}>
        <h3>{t('account.2fa.disableTitle')}</h3>
        <fieldset class="row">
          <legend>{t('account.2fa.disableWith')}</legend>
          <label class="inline">
            <input type="radio" name="method" checked={method === 'code'} onChange={() => setMethod('code')} />
            {t('account.2fa.withCode')}
          </label>
          <label class="inline">
            <input type="radio" name="method" checked={method === 'password'} onChange={() => setMethod('password')} />
            {t('account.2fa.withPassword')}
          </label>
        </fieldset>
        {method === 'code' ? (
          <label key="code">
            {t('account.2fa.disableCode')}
            <input name="secret" required maxLength={64} autocomplete="one-time-code" spellcheck={false} />
          </label>
        ) : (
          <label key="password">
            {t('account.2fa.password')}
            <input name="secret" type="password" required maxLength={1024} autocomplete="current-password" />
          </label>
        )}
        <p role="alert" class="form-error">
          {error}
        </p>
        <div>
          <button type="submit" class="danger" disabled={busy}>
            {t('account.2fa.disable')}
          </button>
        </div>
      </form>
    </>
  );
}
