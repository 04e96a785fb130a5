// Sign-in: username or e-mail and password, then (for two-factor users) a code from the
// authenticator app or a recovery code. Errors are read out through the form's alert.
// Below it, the company sign-in (single sign-on, sign-in-sso.tsx); a single sign-on that
// still needs the TOTP code comes back to the same second step.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TwoFactorRequired } from '../../../src/areas/auth/sessions/schemas.js';
import { signIn, verifyTwoFactor } from '../api/session.js';
import { clearSsoReturn, takeSsoReturn } from '../api/sso-return.js';
import { t } from '../i18n/index.js';
import { problemText } from '../ui/error-view.js';
import { CompanySignIn, SsoRefusal, TenantLinkStart } from './sign-in-sso.js';

type Challenge = Pick<TwoFactorRequired, 'twoFactorToken'>;

export function SignInPage(props: { reason?: 'signedOut' | 'expired' | undefined }) {
  // What a single sign-on brought back is used by this page once, then forgotten.
  const [sso] = useState(() => {
    const found = takeSsoReturn();
    clearSsoReturn();
    return found;
  });
  const [challenge, setChallenge] = useState<Challenge | null>(sso.twoFactorToken ? { twoFactorToken: sso.twoFactorToken } : null);
  const [tenantLink, setTenantLink] = useState(sso.connectionId);
  let content = (
    <>
      <FirstStep onChallenge={setChallenge} />
      <p class="signin-or" aria-hidden="true">
        {t('signIn.or')}
      </p>
      <CompanySignIn />
    </>
  );
  if (challenge) content = <SecondStep challenge={challenge} back={() => setChallenge(null)} />;
  else if (tenantLink) content = <TenantLinkStart connectionId={tenantLink} onFailed={() => setTenantLink(undefined)} />;
  return (
    <main class="signin stack" id="main">
      <h1>{t('app.name')}</h1>
      {props.reason === 'signedOut' && !challenge && !sso.error ? (
        <p class="muted" role="status">
          {t('signIn.signedOut')}
        </p>
      ) : null}
      {sso.error ? <SsoRefusal error={sso.error} /> : null}
      {content}
    </main>
  );
}

function FirstStep(props: { onChallenge: (challenge: TwoFactorRequired) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError('');
    try {
      const result = await signIn(String(form.get('username')), String(form.get('password')));
      if (!result.done) props.onChallenge(result.challenge);
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
    }
  };
  return (
    <form class="card stack" onSubmit={submit}>
      <h2>{t('signIn.title')}</h2>
      <label>
        {t('signIn.username')}
        <input name="username" autocomplete="username" required />
      </label>
      <label>
        {t('signIn.password')}
        <input name="password" type="password" autocomplete="current-password" required />
      </label>
      <p role="alert" class="form-error">
        {error}
      </p>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? t('signIn.working') : t('signIn.submit')}
      </button>
    </form>
  );
}

function SecondStep(props: { challenge: Challenge; back: () => void }) {
  const [recovery, setRecovery] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), [recovery]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('code')).trim();
    setBusy(true);
    setError('');
    try {
      await verifyTwoFactor(props.challenge.twoFactorToken, recovery ? { recoveryCode: value } : { code: value });
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
      input.current?.select();
    }
  };
  return (
    <form class="card stack" onSubmit={submit}>
      <h2>{t('signIn.twoFactorTitle')}</h2>
      {recovery ? null : <p class="muted">{t('signIn.twoFactorHelp')}</p>}
      <label>
        {recovery ? t('signIn.recoveryCode') : t('signIn.code')}
        <input
          ref={input}
          key={recovery ? 'recovery' : 'code'}
          name="code"
          required
          autocomplete="one-time-code"
          inputMode={recovery ? 'text' : 'numeric'}
          spellcheck={false}
        />
      </label>
      <p role="alert" class="form-error">
        {error}
      </p>
      <button type="submit" class="primary" disabled={busy}>
        {t('signIn.verify')}
      </button>
      <button type="button" class="link" onClick={() => setRecovery(!recovery)}>
        {recovery ? t('signIn.useCode') : t('signIn.useRecovery')}
      </button>
      <button type="button" class="link" onClick={props.back}>
        {t('signIn.back')}
      </button>
    </form>
  );
}
