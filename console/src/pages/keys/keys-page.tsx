// /keys: the tenant's API keys, one server page at a time with a search box; create
// (the plaintext shown once), revoke / activate, limits, delete.
import './keys.css';
import { useState } from 'preact/hooks';
import type { ApiKeyRecord } from '../../../../src/areas/auth/api-keys/schemas.js';
import { api } from '../../api/client.js';
import { sessionState } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { announce } from '../../ui/notices.js';
import { PageHeader } from '../../ui/page-header.js';
import { type Column, PagedTable } from '../../ui/paged-table.js';
import { CreateKeyDialog } from './create-key-dialog.js';
import { DeleteKeyDialog, LimitsDialog } from './key-dialogs.js';
import { limitsSummary } from './limits-fields.js';

export function KeysPage() {
  const state = sessionState();
  const tenantId = state.status === 'signedIn' ? state.user.tenantId : '';
  const base = `/api/auth/tenants/${encodeURIComponent(tenantId)}/api-keys`;
  const keyPath = (key: ApiKeyRecord) => `${base}/${encodeURIComponent(key.id)}`;
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ApiKeyRecord | null>(null);
  const [limiting, setLimiting] = useState<ApiKeyRecord | null>(null);
  const [busyId, setBusyId] = useState('');
  const refresh = () => setVersion((n) => n + 1);

  const setStatus = async (key: ApiKeyRecord, action: 'revoke' | 'activate') => {
    setBusyId(key.id);
    try {
      await api<ApiKeyRecord>(`${keyPath(key)}/${action}`, { method: 'POST' });
      announce(t(action === 'revoke' ? 'keys.revoked' : 'keys.activated', { name: key.name }));
      refresh();
    } catch (failure) {
      announce(problemText(failure), 'error');
    } finally {
      setBusyId('');
    }
  };

  const columns: Column<ApiKeyRecord>[] = [
    { header: t('keys.col.name'), rowHeader: true, cell: (key) => key.name },
    { header: t('keys.col.key'), cell: (key) => <span class="mono key-nowrap">{key.maskedKey}</span> },
    { header: t('keys.col.status'), cell: (key) => <StatusBadge apiKey={key} /> },
    { header: t('keys.col.scopes'), cell: (key) => <span class="mono">{scopesOf(key).join(' ') || t('keys.noScopes')}</span> },
    { header: t('keys.col.customer'), cell: (key) => key.customerId ?? '—' },
    { header: t('keys.col.limits'), cell: (key) => limitsSummary(key.limits) },
    { header: t('keys.col.expires'), cell: (key) => formatDate(key.expiresAt, t('keys.noExpiry')) },
    { header: t('keys.col.lastUsed'), cell: (key) => formatDate(key.lastUsedAt, t('common.never')) },
    { header: t('keys.col.created'), cell: (key) => formatDate(key.createdAt) },
    {
      header: t('keys.col.actions'),
      cell: (key) => (
        <div class="key-actions">
          {key.status === 'active' ? (
            <button
              type="button"
              disabled={busyId === key.id}
              aria-label={t('keys.revokeLabel', { name: key.name })}
              onClick={() => void setStatus(key, 'revoke')}
            >
              {t('keys.revoke')}
            </button>
          ) : (
            <button
              type="button"
              disabled={busyId === key.id}
              aria-label={t('keys.activateLabel', { name: key.name })}
              onClick={() => void setStatus(key, 'activate')}
            >
              {t('keys.activate')}
            </button>
          )}
          <button type="button" aria-label={t('keys.editLimitsLabel', { name: key.name })} onClick={() => setLimiting(key)}>
            {t('keys.editLimits')}
          </button>
          <button type="button" class="danger" aria-label={t('keys.deleteLabel', { name: key.name })} onClick={() => setDeleting(key)}>
            {t('keys.delete')}
          </button>
        </div>
      ),
    },
  ];

  return (
    <section class="page stack">
      <PageHeader title={t('keys.title')} actionLabel={t('keys.create')} onAction={() => setCreating(true)} />
      <p class="muted">{t('keys.intro')}</p>
      <PagedTable<ApiKeyRecord> path={base} label={t('keys.listLabel')} columns={columns} rowKey={(key) => key.id} version={version} />
      <CreateKeyDialog
        tenantId={tenantId}
        open={creating}
        onClose={() => {
          setCreating(false);
          refresh();
        }}
      />
      <DeleteKeyDialog keyPath={keyPath} target={deleting} onClose={() => setDeleting(null)} onChanged={refresh} />
      <LimitsDialog keyPath={keyPath} target={limiting} onClose={() => setLimiting(null)} onChanged={refresh} />
    </section>
  );
}

function StatusBadge(props: { apiKey: ApiKeyRecord }) {
  const { status, expiresAt } = props.apiKey;
  if (status === 'revoked') return <span class="badge bad">{t('keys.status.revoked')}</span>;
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) return <span class="badge warn">{t('keys.status.expired')}</span>;
  return <span class="badge ok">{t('keys.status.active')}</span>;
}

/** The record's scopes are a JSON-encoded array (the API contract); anything else shows as none. */
function scopesOf(key: ApiKeyRecord): string[] {
  try {
    const parsed: unknown = JSON.parse(key.scopes);
    return Array.isArray(parsed) ? parsed.filter((scope): scope is string => typeof scope === 'string') : [];
  } catch {
    return [];
  }
}
