// A tenant's rate limits and quotas (platform admin): PATCH {limits} replaces what was
// set; an empty field is no limit, so an empty form clears them all.
import { useState } from 'preact/hooks';
import type { Tenant } from '../../../../src/areas/auth/tenants/schemas.js';
import type { LimitsInput } from '../../../../src/platform/rate-limits/limits.js';
import { api } from '../../api/client.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { BOUNDS, LIMIT_NAMES } from './limits.js';

export function LimitsDialog(props: { tenant: Tenant | null; onClose: () => void; onSaved: () => void }) {
  const { tenant } = props;
  return (
    <Dialog title={t('tenants.limits.title', { name: tenant?.name ?? '' })} open={tenant !== null} onClose={props.onClose}>
      {tenant ? <LimitsForm key={tenant.id} tenant={tenant} onSaved={props.onSaved} /> : null}
    </Dialog>
  );
}

function LimitsForm(props: { tenant: Tenant; onSaved: () => void }) {
  const { tenant } = props;
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const limits: LimitsInput = {};
    for (const name of LIMIT_NAMES) {
      const value = String(form.get(name) ?? '').trim();
      if (value) limits[name] = Number(value);
    }
    setBusy(true);
    setError('');
    try {
      await api<Tenant>(`/api/auth/tenants/${encodeURIComponent(tenant.id)}`, { method: 'PATCH', body: { limits } });
      announce(t('tenants.limits.saved', { name: tenant.name }));
      props.onSaved();
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <p class="muted">{t('tenants.limits.help')}</p>
      {LIMIT_NAMES.map((name) => (
        <label key={name}>
          {t(`tenants.limits.${name}` as MessageKey)}
          <input
            name={name}
            type="number"
            inputMode="numeric"
            min={1}
            max={BOUNDS[name]}
            step={1}
            defaultValue={tenant.limits[name]?.toString() ?? ''}
          />
        </label>
      ))}
      <p role="alert" class="form-error">
        {error}
      </p>
      <button type="submit" class="primary" disabled={busy}>
        {t('tenants.limits.submit')}
      </button>
    </form>
  );
}
