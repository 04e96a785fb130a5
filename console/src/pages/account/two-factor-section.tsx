// Two-factor: off → "Set up" gives a secret and its otpauth URI (shown as a QR code and
// as text), a code turns it on and the recovery codes are shown once; on → it can be
// turned off with a code or the password. The session's user is updated either way.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EnableResponse, SetupResponse } from '../../../../src/areas/auth/two-factor/schemas.js';
import { api } from '../../api/client.js';
import { type User, updateUser } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { DisableTwoFactor } from './disable-two-factor.js';
import { QrCode } from './qr-code.js';
import { RecoveryCodes } from './recovery-codes.js';

type Phase = { step: 'idle' } | { step: 'setup'; setup: SetupResponse } | { step: 'codes'; codes: string[] };

export function TwoFactorSection(props: { user: User }) {
  const [phase, setPhase] = useState<Phase>({ step: 'idle' });
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const begin = async () => {
    setBusy(true);
    setError('');
    try {
      setPhase({ step: 'setup', setup: await api<SetupResponse>('/api/auth/2fa/setup', { method: 'POST' }) });
    } catch (failure) {
      setError(problemText(failure));
    }
    setBusy(false);
  };
  let body: ComponentChildren;
  if (phase.step === 'codes') body = <RecoveryCodes codes={phase.codes} onDone={() => setPhase({ step: 'idle' })} />;
  else if (props.user.twoFactorEnabled) body = <DisableTwoFactor />;
  else if (phase.step === 'setup')
    body = (
      <EnableForm
        setup={phase.setup}
        onCancel={() => setPhase({ step: 'idle' })}
        onEnabled={(codes) => {
          setPhase({ step: 'codes', codes });
          updateUser({ ...props.user, twoFactorEnabled: true });
          announce(t('account.2fa.enabled'));
        }}
      />
    );
  else
    body = (
      <>
        <p>{t('account.2fa.off')}</p>
        <p role="alert" class="form-error">
          {error}
        </p>
        <div>
          <button type="button" class="primary" onClick={() => void begin()} disabled={busy}>
            {t('account.2fa.setup')}
          </button>
        </div>
      </>
    );
  return (
    <section class="card stack" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">{t('account.2fa.title')}</h2>
      {body}
    </section>
  );
}

function EnableForm(props: { setup: SetupResponse; onCancel: () => void; onEnabled: (codes: string[]) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget as HTMLFormElement).get('code')).replace(/\s+/g, '');
    setBusy(true);
    setError('');
    try {
      const { recoveryCodes } = await api<EnableResponse>('/api/auth/2fa/enable', { method: 'POST', body: { code } });
      props.onEnabled(recoveryCodes);
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
      input.current?.select();
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <p>{t('account.2fa.scan')}</p>
      <QrCode text={props.setup.otpauthUri} label={t('account.2fa.qrLabel')} />
      <p>
        {t('account.2fa.secret')}: <code class="totp-secret">{props.setup.secret}</code>
      </p>
      <label>
        {t('account.2fa.code')}
        <input
          ref={input}
          name="code"
          required
          autocomplete="one-time-code"
          inputMode="numeric"
          maxLength={64}
          spellcheck={false}
          aria-describedby="enable-code-help"
        />
      </label>
      <p id="enable-code-help" class="muted">
        {t('account.2fa.codeHelp')}
      </p>
      <p role="alert" class="form-error">
        {error}
      </p>
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {t('account.2fa.enable')}
        </button>
        <button type="button" onClick={props.onCancel}>
          {t('account.2fa.cancelSetup')}
        </button>
      </div>
    </form>
  );
}
