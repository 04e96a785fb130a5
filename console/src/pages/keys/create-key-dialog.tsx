// "Create key": the form, then the plaintext key shown once with a Copy button. The
// plaintext lives only in this component's state: closing the dialog unmounts it
// (Dialog renders its children only while open), so nothing keeps it afterwards.
import { useRef, useState } from 'preact/hooks';
import type { CreatedApiKey, NewApiKey } from '../../../../src/areas/auth/api-keys/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';
import { announce } from '../../ui/notices.js';
import { LimitsFields, readLimits } from './limits-fields.js';

export function CreateKeyDialog(props: { tenantId: string; open: boolean; onClose: () => void }) {
  return (
    <Dialog title={t('keys.createTitle')} open={props.open} onClose={props.onClose}>
      <CreateKey tenantId={props.tenantId} onDone={props.onClose} />
    </Dialog>
  );
}

interface Created {
  name: string;
  plaintext: string;
  limitsProblem: string;
}

function CreateKey(props: { tenantId: string; onDone: () => void }) {
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const base = `/api/auth/tenants/${encodeURIComponent(props.tenantId)}/api-keys`;

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const limits = readLimits(form);
    if ('error' in limits) return setError(limits.error);
    const body = newKeyBody(form);
    setBusy(true);
    setError('');
    try {
      const key = await api<CreatedApiKey>(base, { method: 'POST', body });
      // The create body has no limits: they are set on the new key right after.
      let limitsProblem = '';
      if (Object.keys(limits.limits).length > 0) {
        try {
          await api(`${base}/${encodeURIComponent(key.id)}`, { method: 'PATCH', body: { limits: limits.limits } });
        } catch (failure) {
          limitsProblem = problemText(failure);
        }
      }
      setCreated({ name: key.name, plaintext: key.key, limitsProblem });
      announce(t('keys.createdNotice', { name: key.name }));
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };

  if (created) return <ShowOnce created={created} onDone={props.onDone} />;
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('keys.name')}
        <input name="name" required maxLength={200} autocomplete="off" />
      </label>
      <label>
        {t('keys.scopes')}
        <input
          name="scopes"
          autocomplete="off"
          spellcheck={false}
          aria-describedby="new-key-scopes-hint"
          placeholder="llm:read llm:write"
        />
      </label>
      <p id="new-key-scopes-hint" class="muted field-hint">
        {t('keys.scopesHint')}
      </p>
      <div class="row key-fields">
        <div class="stack">
          <label>
            {t('keys.expires')}
            <input name="expires" type="date" min={today()} aria-describedby="new-key-expires-hint" />
          </label>
          <p id="new-key-expires-hint" class="muted field-hint">
            {t('keys.expiresHint')}
          </p>
        </div>
        <div class="stack">
          <label>
            {t('keys.customer')}
            <input name="customerId" maxLength={200} autocomplete="off" aria-describedby="new-key-customer-hint" />
          </label>
          <p id="new-key-customer-hint" class="muted field-hint">
            {t('keys.customerHint')}
          </p>
        </div>
      </div>
      <LimitsFields idPrefix="new-key" />
      <FormFooter error={error} submitLabel={busy ? t('keys.creating') : t('keys.submitCreate')} disabled={busy} onCancel={props.onDone} />
    </form>
  );
}

function ShowOnce(props: { created: Created; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.created.plaintext);
      announce(t('common.copied'));
    } catch {
      field.current?.select();
      announce(t('keys.copyFailed'), 'error');
    }
  };
  return (
    <div class="stack">
      <h3>{t('keys.createdTitle')}</h3>
      <p class="warning-note" id="new-key-warning">
        <strong>{t('keys.onceWarning')}</strong>
      </p>
      <label>
        {t('keys.plaintext')}
        <input
          ref={field}
          class="mono key-plaintext"
          readOnly
          value={props.created.plaintext}
          aria-describedby="new-key-warning"
          spellcheck={false}
          autocomplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
      </label>
      {props.created.limitsProblem ? (
        <p role="alert" class="form-error">
          {t('keys.limitsNotSaved', { detail: props.created.limitsProblem })}
        </p>
      ) : null}
      <div class="row">
        <button type="button" class="primary" onClick={() => void copy()}>
          {t('keys.copy')}
        </button>
        <button type="button" onClick={props.onDone}>
          {t('keys.done')}
        </button>
      </div>
    </div>
  );
}

function newKeyBody(form: FormData): NewApiKey {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const scopes = text('scopes')
    .split(/[\s,]+/)
    .filter(Boolean);
  const body: NewApiKey = { name: text('name') };
  if (scopes.length) body.scopes = [...new Set(scopes)];
  const expires = text('expires');
  // The end of the chosen day in the reader's time zone, sent in UTC.
  if (expires) body.expiresAt = new Date(`${expires}T23:59:59.999`).toISOString();
  if (text('customerId')) body.customerId = text('customerId');
  return body;
}

/** Today as yyyy-mm-dd in local time (the date input's own format). */
function today(): string {
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}
