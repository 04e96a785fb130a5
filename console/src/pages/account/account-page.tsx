// Account (any signed-in user): the profile, two-factor setup (a QR code drawn here,
// recovery codes shown once) or removal, a password change, and the active sessions.
import { useState } from 'preact/hooks';
import { sessionState } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { PasswordSection } from './password-section.js';
import { Profile } from './profile.js';
import { SessionsSection } from './sessions-section.js';
import { TwoFactorSection } from './two-factor-section.js';
import './account.css';

export function AccountPage() {
  const session = sessionState();
  // A password change signs the other sessions out: the list is read again after one.
  const [sessionsVersion, setSessionsVersion] = useState(0);
  if (session.status !== 'signedIn') return null;
  const { user } = session;
  return (
    <section class="page stack">
      <h1>{t('account.title')}</h1>
      <Profile user={user} />
      <TwoFactorSection user={user} />
      <PasswordSection onChanged={() => setSessionsVersion((n) => n + 1)} />
      <SessionsSection version={sessionsVersion} />
    </section>
  );
}
