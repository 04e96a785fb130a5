// The root: restore the session from the refresh cookie, then either the sign-in page
// or the signed-in shell (fetched as its own chunk on first need). What a single sign-on
// brought back in the address (a TOTP step still to do, a refusal) is read first.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onSessionChange, refresh, sessionState, startSignedOut, type SessionState, type User } from './api/session.js';
import { clearSsoReturn, takeSsoReturn } from './api/sso-return.js';
import { t } from './i18n/index.js';
import { SignInPage } from './pages/sign-in-page.js';
import { Notices } from './ui/notices.js';

type ShellComponent = FunctionComponent<{ user: User }>;
let loadedShell: ShellComponent | null = null;

function useShell(needed: boolean): ShellComponent | null {
  const [shell, setShell] = useState<ShellComponent | null>(loadedShell);
  useEffect(() => {
    if (!needed || shell) return;
    void import('./shell.js').then((module) => {
      loadedShell = module.Shell;
      setShell(() => module.Shell);
    });
  }, [needed, shell]);
  return shell;
}

export function App() {
  const [state, setState] = useState<SessionState>(sessionState());
  useEffect(() => {
    const stop = onSessionChange(setState);
    // A sign-in waiting for its TOTP code is a new sign-in: the cookie of an older session is not asked.
    if (takeSsoReturn().twoFactorToken) startSignedOut();
    // Signed in already: a tenant link or a refusal has nothing left to do.
    else if (sessionState().status === 'loading') void refresh().then((signedIn) => signedIn && clearSsoReturn());
    return stop;
  }, []);
  const Shell = useShell(state.status === 'signedIn');
  return (
    <>
      {state.status === 'loading' ? (
        <p class="loading" role="status">
          {t('app.loading')}
        </p>
      ) : state.status === 'signedOut' ? (
        <SignInPage reason={state.reason} />
      ) : Shell ? (
        <Shell user={state.user} />
      ) : (
        <p class="loading" role="status">
          {t('app.loading')}
        </p>
      )}
      <Notices />
    </>
  );
}
