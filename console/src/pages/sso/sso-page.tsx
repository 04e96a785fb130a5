// /sso (a tenant admin's own tenant) and /tenants/:tenantId/sso (a platform admin, any
// tenant): the tenant's single sign-on connections, each a card with what it does and
// the URLs to enter at the identity provider; add, edit, turn on or off, delete. Then
// SCIM provisioning: its base URL and the tenant's SCIM tokens (scim-section.tsx).
import './sso.css';
import { useState } from 'preact/hooks';
import type { Tenant } from '../../../../src/areas/auth/tenants/schemas.js';
import type { SsoConnection } from '../../../../src/areas/auth/sso/schemas.js';
import { api, isApiError } from '../../api/client.js';
import { sessionState } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { PageHeader } from '../../ui/page-header.js';
import { useLoad } from '../../ui/use-load.js';
import { ConnectionDialog, DeleteConnectionDialog, ToggleDialog } from './connection-dialogs.js';
import { ConnectionUrls } from './connection-urls.js';
import { ScimSection } from './scim-section.js';

export function SsoPage(props: { tenantId?: string }) {
  const state = sessionState();
  const tenantId = props.tenantId ?? (state.status === 'signedIn' ? state.user.tenantId : '');
  const tenantPath = `/api/auth/tenants/${encodeURIComponent(tenantId)}`;
  const base = `${tenantPath}/sso/connections`;
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState<SsoConnection | 'new' | null>(null);
  const [toggling, setToggling] = useState<SsoConnection | null>(null);
  const [deleting, setDeleting] = useState<SsoConnection | null>(null);
  const refresh = () => setVersion((n) => n + 1);
  const list = useLoad((signal) => api<{ data: SsoConnection[] }>(base, { signal }), [base, version]);
  // A platform admin's view of another tenant names it.
  const tenant = useLoad(
    (signal) => (props.tenantId ? api<Tenant>(tenantPath, { signal }) : Promise.resolve(null)),
    [tenantPath, props.tenantId],
  );

  // Another tenant's id, or a page the API refuses: the whole page says so.
  if (isApiError(list.error, 403) || isApiError(list.error, 404)) return <ErrorView error={list.error} />;
  const connections = list.data?.data ?? [];
  return (
    <section class="page stack">
      <PageHeader title={t('sso.title')} actionLabel={t('sso.create')} onAction={() => setEditing('new')} />
      {tenant.data ? <p class="sso-tenant">{t('sso.tenant', { name: tenant.data.name })}</p> : null}
      <p class="muted">{t('sso.intro')}</p>
      <section class="stack" aria-labelledby="sso-connections-heading" aria-busy={list.loading}>
        <h2 id="sso-connections-heading">{t('sso.connections')}</h2>
        <p class="muted sso-section-note">{t('sso.url.hint')}</p>
        {list.error ? <ErrorView error={list.error} retry={list.reload} /> : null}
        {!list.loading && !list.error && connections.length === 0 ? <p class="muted">{t('sso.empty')}</p> : null}
        <ul class="sso-list">
          {connections.map((connection) => (
            <ConnectionCard
              key={connection.id}
              connection={connection}
              onEdit={() => setEditing(connection)}
              onToggle={() => setToggling(connection)}
              onDelete={() => setDeleting(connection)}
            />
          ))}
        </ul>
      </section>
      <ScimSection tenantPath={tenantPath} origin={publicOrigin(connections)} />
      <ConnectionDialog base={base} target={editing} onClose={() => setEditing(null)} onChanged={refresh} />
      <ToggleDialog base={base} target={toggling} onClose={() => setToggling(null)} onChanged={refresh} />
      <DeleteConnectionDialog base={base} target={deleting} onClose={() => setDeleting(null)} onChanged={refresh} />
    </section>
  );
}

/** The origin the gateway's own URLs are built on (GATEWAY_PUBLIC_URL, as a connection's redirect URI shows it), else the browser's. */
function publicOrigin(connections: SsoConnection[]): string {
  const first = connections[0];
  return first ? new URL(first.redirectUri).origin : location.origin;
}

function ConnectionCard(props: { connection: SsoConnection; onEdit: () => void; onToggle: () => void; onDelete: () => void }) {
  const c = props.connection;
  const mapping = Object.entries(c.roleMapping);
  const headingId = `sso-card-${c.id}`;
  return (
    <li class="card stack sso-card" aria-labelledby={headingId}>
      <div class="sso-card-head">
        <h3 id={headingId}>{c.name}</h3>
        <span class={c.enabled ? 'badge ok' : 'badge bad'}>{t(c.enabled ? 'sso.status.enabled' : 'sso.status.disabled')}</span>
        {c.ssoOnly ? <span class="badge warn">{t('sso.status.ssoOnly')}</span> : null}
      </div>
      <dl class="sso-facts">
        <div>
          <dt>{t('sso.fact.issuer')}</dt>
          <dd class="mono">{c.issuer}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.clientId')}</dt>
          <dd class="mono">{c.clientId}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.domains')}</dt>
          <dd>{c.allowedEmailDomains.length ? c.allowedEmailDomains.join(', ') : t('sso.fact.noDomains')}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.accounts')}</dt>
          <dd>{t(c.jit ? 'sso.fact.jit' : 'sso.fact.noJit')}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.roles')}</dt>
          <dd>
            {mapping.length
              ? mapping
                  .map(([group, role]) => t('sso.fact.mapped', { group, role: t(role === 'admin' ? 'sso.role.admin' : 'sso.role.member') }))
                  .join('; ')
              : t('sso.fact.noMapping')}
          </dd>
        </div>
        <div>
          <dt>{t('sso.fact.twoFactor')}</dt>
          <dd>{t(c.trustIdpMfa ? 'sso.fact.trustIdpMfa' : 'sso.fact.ownTotp')}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.scopes')}</dt>
          <dd class="mono">{c.scopes.join(' ')}</dd>
        </div>
        <div>
          <dt>{t('sso.fact.claims')}</dt>
          <dd>{t('sso.fact.claimsValue', { groups: c.groupsClaim, subject: c.subjectClaim })}</dd>
        </div>
      </dl>
      <ConnectionUrls connection={c} />
      <div class="row">
        <button type="button" onClick={props.onEdit} aria-label={t('sso.editNamed', { name: c.name })}>
          {t('sso.edit')}
        </button>
        <button
          type="button"
          class={c.enabled ? 'danger' : ''}
          onClick={props.onToggle}
          aria-label={t(c.enabled ? 'sso.disableNamed' : 'sso.enableNamed', { name: c.name })}
        >
          {t(c.enabled ? 'sso.disable' : 'sso.enable')}
        </button>
        <button type="button" class="danger" onClick={props.onDelete} aria-label={t('sso.deleteNamed', { name: c.name })}>
          {t('sso.delete')}
        </button>
      </div>
    </li>
  );
}
