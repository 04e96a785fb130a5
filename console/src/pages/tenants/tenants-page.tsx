// Tenants (platform admin): every tenant, paged and searchable on the server; create
// one (with its first admin, optionally), disable or enable it, edit its limits, open
// its single sign-on page.
import { useState } from 'preact/hooks';
import type { Tenant } from '../../../../src/areas/auth/tenants/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { announce } from '../../ui/notices.js';
import { type Column, PagedTable } from '../../ui/paged-table.js';
import { CreateTenantDialog } from './create-tenant-dialog.js';
import { LimitsDialog } from './limits-dialog.js';
import { limitsSummary } from './limits.js';

export function TenantsPage() {
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [limitsOf, setLimitsOf] = useState<Tenant | null>(null);
  const refresh = () => setVersion((n) => n + 1);

  const setStatus = async (tenant: Tenant, status: Tenant['status']) => {
    if (status === 'disabled' && !confirm(t('tenants.confirmDisable', { name: tenant.name }))) return;
    try {
      await api<Tenant>(`/api/auth/tenants/${encodeURIComponent(tenant.id)}`, { method: 'PATCH', body: { status } });
      announce(t(status === 'disabled' ? 'tenants.disabled' : 'tenants.enabled', { name: tenant.name }));
      refresh();
    } catch (error) {
      announce(problemText(error), 'error');
    }
  };

  const columns: Column<Tenant>[] = [
    { header: t('tenants.col.name'), rowHeader: true, cell: (tenant) => tenant.name },
    { header: t('tenants.col.id'), cell: (tenant) => <span class="mono">{tenant.id}</span> },
    {
      header: t('tenants.col.status'),
      cell: (tenant) => (
        <span class={tenant.status === 'active' ? 'badge ok' : 'badge bad'}>
          {t(tenant.status === 'active' ? 'tenants.status.active' : 'tenants.status.disabled')}
        </span>
      ),
    },
    { header: t('tenants.col.limits'), cell: (tenant) => limitsSummary(tenant.limits) },
    { header: t('tenants.col.created'), cell: (tenant) => formatDate(tenant.createdAt) },
    {
      header: t('common.actions'),
      cell: (tenant) => (
        <div class="row">
          {tenant.status === 'active' ? (
            <button
              type="button"
              class="danger"
              onClick={() => void setStatus(tenant, 'disabled')}
              aria-label={t('tenants.disableNamed', { name: tenant.name })}
            >
              {t('tenants.disable')}
            </button>
          ) : (
            <button
              type="button"
              onClick={() => void setStatus(tenant, 'active')}
              aria-label={t('tenants.enableNamed', { name: tenant.name })}
            >
              {t('tenants.enable')}
            </button>
          )}
          <button type="button" onClick={() => setLimitsOf(tenant)} aria-label={t('tenants.editLimitsNamed', { name: tenant.name })}>
            {t('tenants.editLimits')}
          </button>
          <Link
            href={`/tenants/${encodeURIComponent(tenant.id)}/sso`}
            class="button-link"
            aria-label={t('tenants.ssoNamed', { name: tenant.name })}
          >
            {t('tenants.sso')}
          </Link>
        </div>
      ),
    },
  ];

  return (
    <section class="page stack">
      <h1>{t('tenants.title')}</h1>
      <p class="muted">{t('tenants.intro')}</p>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          {t('tenants.create')}
        </button>
      </div>
      <PagedTable
        path="/api/auth/tenants"
        label={t('tenants.listLabel')}
        columns={columns}
        rowKey={(tenant) => tenant.id}
        version={version}
      />
      <CreateTenantDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={() => {
          setCreating(false);
          refresh();
        }}
      />
      <LimitsDialog
        tenant={limitsOf}
        onClose={() => setLimitsOf(null)}
        onSaved={() => {
          setLimitsOf(null);
          refresh();
        }}
      />
    </section>
  );
}
