// Single sign-on on the sign-in page: "Sign in with your company account" (the work
// e-mail asks POST /api/auth/sso/discover which connection serves its domain, then the
// browser goes to that connection's start URL), a tenant link's direct start
// (`?sso=sso_…`), and the message for a refused sign-in the gateway sent back.
import { useEffect, useState } from 'preact/hooks';
import { problemOf } from '../api/problem.js';
import { type DiscoveredConnection, type SsoError, startUrlFor, startUrlOf } from '../api/sso-return.js';
import { type MessageKey, t } from '../i18n/index.js';
import { problemText } from '../ui/error-view.js';

const REFUSALS: Record<SsoError, MessageKey> = {
  transaction: 'signIn.sso.error.transaction',
  idp: 'signIn.sso.error.idp',
  unavailable: 'signIn.sso.error.unavailable',
  not_linked: 'signIn.sso.error.not_linked',
  account_disabled: 'signIn.sso.error.account_disabled',
  too_many_attempts: 'signIn.sso.error.too_many_attempts',
  unknown: 'signIn.sso.error.unknown',
};

/** Why the company sign-in did not sign the user in. */
export function SsoRefusal(props: { error: SsoError }) {
  return (
    <div role="alert" class="card error-box sso-refusal">
      <p>
        <strong>{t('signIn.sso.refused')}</strong>
      </p>
      <p>{t(REFUSALS[props.error])}</p>
    </div>
  );
}

const go = (url: string) => location.assign(url);

export function CompanySignIn() {
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [choices, setChoices] = useState<DiscoveredConnection[]>([]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget as HTMLFormElement).get('email') ?? '').trim();
    setBusy(true);
    setError('');
    setNote('');
    setChoices([]);
    try {
      const response = await fetch('/api/auth/sso/discover', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      if (!response.ok) throw await problemOf(response);
      const { connections } = (await response.json()) as { connections: DiscoveredConnection[] };
      if (connections.length === 1) return go(startUrlFor(connections[0]!.startUrl));
      if (connections.length === 0) setNote(t('signIn.sso.none', { email }));
      else setChoices(connections);
    } catch (failure) {
      setError(problemText(failure));
    }
    setBusy(false);
  };
  return (
    <form class="card stack" onSubmit={submit} aria-labelledby="company-sign-in">
      <h2 id="company-sign-in">{t('signIn.sso.title')}</h2>
      <p class="muted field-note">{t('signIn.sso.help')}</p>
      <label>
        {t('signIn.sso.email')}
        <input name="email" type="email" autocomplete="email" required maxLength={320} spellcheck={false} />
      </label>
      <p role="alert" class="form-error">
        {error}
      </p>
      <p role="status" class="muted field-note">
        {note}
      </p>
      {choices.length > 0 ? (
        <ul class="sso-choices" aria-label={t('signIn.sso.choose')}>
          {choices.map((choice) => (
            <li key={choice.id}>
              <button type="button" class="primary" onClick={() => go(startUrlFor(choice.startUrl))}>
                {t('signIn.sso.continueWith', { name: choice.name })}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <button type="submit" disabled={busy}>
        {busy ? t('signIn.sso.looking') : t('signIn.sso.continue')}
      </button>
    </form>
  );
}

/**
 * A tenant link (`?sso=sso_…`): asks the start URL first without following it, so a
 * link to a connection that does not exist or is turned off says so here instead of
 * leaving the user on the API's JSON; then goes there for real.
 */
export function TenantLinkStart(props: { connectionId: string; onFailed: () => void }) {
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const url = startUrlFor(startUrlOf(props.connectionId));
    let cancelled = false;
    fetch(url, { redirect: 'manual', credentials: 'same-origin' })
      .then((response) => {
        if (cancelled) return;
        if (response.type === 'opaqueredirect') go(url);
        else setFailed(true);
      })
      .catch(() => !cancelled && setFailed(true));
    return () => {
      cancelled = true;
    };
  }, [props.connectionId]);
  if (!failed)
    return (
      <p class="card" role="status">
        {t('signIn.sso.redirecting')}
      </p>
    );
  return (
    <div role="alert" class="card error-box stack">
      <p>{t('signIn.sso.badLink')}</p>
      <button type="button" onClick={props.onFailed}>
        {t('signIn.sso.otherWays')}
      </button>
    </div>
  );
}
