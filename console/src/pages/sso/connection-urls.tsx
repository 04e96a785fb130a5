// What a tenant admin enters at the identity provider (the connection's read-only
// redirect, post-logout and back-channel logout URIs), and the tenant link that starts
// this connection's sign-in from the console (`/?sso=<id>`), each with a Copy button.
import type { SsoConnection } from '../../../../src/areas/auth/sso/schemas.js';
import { t } from '../../i18n/index.js';
import { CopyField } from '../../ui/copy-field.js';

/** The console's sign-in link for a connection, on the origin its redirect URI names (GATEWAY_PUBLIC_URL). */
export function signInLinkOf(connection: SsoConnection): string {
  return `${new URL(connection.redirectUri).origin}/?sso=${encodeURIComponent(connection.id)}`;
}

export function ConnectionUrls(props: { connection: SsoConnection; hint?: boolean }) {
  const c = props.connection;
  const item = (label: string, value: string) => (
    <CopyField label={label} value={value} copyLabel={t('sso.copyOf', { what: label, name: c.name })} />
  );
  return (
    <div class="stack sso-urls">
      {item(t('sso.url.redirect'), c.redirectUri)}
      {item(t('sso.url.postLogout'), c.postLogoutRedirectUri)}
      {item(t('sso.url.backchannel'), c.backchannelLogoutUri)}
      {item(t('sso.url.signInLink'), signInLinkOf(c))}
      {props.hint ? <p class="muted field-note">{t('sso.url.hint')}</p> : null}
    </div>
  );
}
