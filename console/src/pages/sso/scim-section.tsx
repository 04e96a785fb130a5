// The SCIM part of the single sign-on page: the base URL the identity provider's
// provisioning client is given, and the tenant's SCIM tokens (list, create with an
// optional expiry, delete). A new token is shown once, in its dialog, with Copy; the
// list shows only its masked form. The token lives only in that dialog's state:
// closing the dialog unmounts it (Dialog renders its children only while open).
import { useState } from 'preact/hooks';
import type { CreatedScimToken, NewScimToken, ScimTokenRecord } from '../../../../src/areas/auth/scim-tokens/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ConfirmDialog } from '../../ui/confirm-dialog.js';
import { CopyField } from '../../ui/copy-field.js';
import { Dialog } from '../../ui/dialog.js';
import { ErrorView } from '../../ui/error-view.js';
import { FieldError } from '../../ui/field-error.js';
import { type FormProblem, formProblem, invalidProps } from '../../ui/field-errors.js';
import { FormFooter } from '../../ui/form-footer.js';
import { formatDate } from '../../ui/format.js';
import { announce } from '../../ui/notices.js';
import { useLoad } from '../../ui/use-load.js';

/** The SCIM prefix of src/areas/auth/scim/routes.ts, on the gateway's public origin. */
const SCIM_PATH = '/api/auth/scim/v2';

export function ScimSection(props: { tenantPath: string; origin: string }) {
  const base = `${props.tenantPath}/scim-tokens`;
  const scimBaseUrl = () => `${props.origin}${SCIM_PATH}`;
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ScimTokenRecord | null>(null);
  const refresh = () => setVersion((n) => n + 1);
  const list = useLoad((signal) => api<{ data: ScimTokenRecord[] }>(base, { signal }), [base, version]);
  const tokens = list.data?.data ?? [];
  return (
    <section class="stack" aria-labelledby="scim-heading" aria-busy={list.loading}>
      <div class="page-head scim-head">
        <h2 id="scim-heading">{t('scim.title')}</h2>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          {t('scim.create')}
        </button>
      </div>
      <p class="muted sso-section-note">{t('scim.intro')}</p>
      <CopyField label={t('scim.baseUrl')} value={scimBaseUrl()} describedBy="scim-base-hint" />
      <p id="scim-base-hint" class="muted field-hint">
        {t('scim.baseUrlHint')}
      </p>
      {list.error ? <ErrorView error={list.error} retry={list.reload} /> : null}
      {!list.loading && !list.error && tokens.length === 0 ? <p class="muted">{t('scim.empty')}</p> : null}
      {tokens.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
        <section class="table-wrap" tabIndex={0} aria-label={t('scim.listLabel')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('scim.col.name')}</th>
                <th scope="col">{t('scim.col.token')}</th>
                <th scope="col">{t('scim.col.expires')}</th>
                <th scope="col">{t('scim.col.lastUsed')}</th>
                <th scope="col">{t('scim.col.created')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <th scope="row">{token.name}</th>
                  <td>
                    <span class="mono scim-nowrap">{token.maskedToken}</span>
                  </td>
                  <td>
                    <Expiry token={token} />
                  </td>
                  <td>{formatDate(token.lastUsedAt, t('common.never'))}</td>
                  <td>{formatDate(token.createdAt)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={t('scim.deleteNamed', { name: token.name })}
                      onClick={() => setDeleting(token)}
                    >
                      {t('scim.delete')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      <Dialog
        title={t('scim.createTitle')}
        open={creating}
        onClose={() => {
          setCreating(false);
          refresh();
        }}
      >
        <CreateToken base={base} baseUrl={scimBaseUrl()} onCreated={refresh} onDone={() => setCreating(false)} />
      </Dialog>
      <ConfirmDialog
        title={t('scim.deleteTitle')}
        open={deleting !== null}
        message={
          <>
            <p>{t('common.confirmDelete', { name: deleting?.name ?? '' })}</p>
            <p class="muted">{t('scim.deleteWarning')}</p>
          </>
        }
        confirmLabel={t('scim.deleteConfirm')}
        onConfirm={async () => {
          if (!deleting) return;
          await api(`${base}/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
          announce(t('scim.deleted', { name: deleting.name }));
          setDeleting(null);
          refresh();
        }}
        onClose={() => setDeleting(null)}
      />
    </section>
  );
}

function Expiry(props: { token: ScimTokenRecord }) {
  const { expiresAt } = props.token;
  if (!expiresAt) return <>{t('scim.noExpiry')}</>;
  if (Date.parse(expiresAt) <= Date.now()) return <span class="badge warn">{t('scim.expired')}</span>;
  return <>{formatDate(expiresAt)}</>;
}

const FIELDS = ['name', 'expiresAt'] as const;

function CreateToken(props: { base: string; baseUrl: string; onCreated: () => void; onDone: () => void }) {
  const [created, setCreated] = useState<CreatedScimToken | null>(null);
  const [problem, setProblem] = useState<FormProblem>({ fields: {}, summary: '' });
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const body: NewScimToken = { name: String(form.get('name') ?? '').trim() };
    const expires = String(form.get('expires') ?? '');
    // The end of the chosen day in the reader's time zone, sent in UTC.
    if (expires) body.expiresAt = new Date(`${expires}T23:59:59.999`).toISOString();
    setBusy(true);
    setProblem({ fields: {}, summary: '' });
    try {
      const token = await api<CreatedScimToken>(props.base, { method: 'POST', body });
      setCreated(token);
      announce(t('scim.created', { name: token.name }));
      props.onCreated();
    } catch (failure) {
      const next = formProblem(failure, FIELDS, t('sso.form.checkFields'));
      setProblem(next);
    } finally {
      setBusy(false);
    }
  };
  if (created) return <ShowOnce token={created} baseUrl={props.baseUrl} onDone={props.onDone} />;
  const f = problem.fields;
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('scim.name')}
        <input name="name" required maxLength={200} autocomplete="off" {...invalidProps(f, 'name', 'scim-name-error', 'scim-name-hint')} />
      </label>
      <FieldError id="scim-name-error" message={f.name} />
      <p id="scim-name-hint" class="muted field-hint">
        {t('scim.nameHint')}
      </p>
      <label>
        {t('scim.expires')}
        <input name="expires" type="date" min={today()} {...invalidProps(f, 'expiresAt', 'scim-expires-error', 'scim-expires-hint')} />
      </label>
      <FieldError id="scim-expires-error" message={f.expiresAt} />
      <p id="scim-expires-hint" class="muted field-hint">
        {t('scim.expiresHint')}
      </p>
      <FormFooter
        error={problem.summary}
        submitLabel={busy ? t('scim.creating') : t('scim.submitCreate')}
        disabled={busy}
        onCancel={props.onDone}
      />
    </form>
  );
}

function ShowOnce(props: { token: CreatedScimToken; baseUrl: string; onDone: () => void }) {
  return (
    <div class="stack">
      <p class="warning-note" id="scim-once-warning">
        <strong>{t('scim.onceWarning')}</strong>
      </p>
      <CopyField label={t('scim.plaintext')} value={props.token.token} describedBy="scim-once-warning" />
      <CopyField label={t('scim.baseUrl')} value={props.baseUrl} copyLabel={t('scim.copyBaseUrl')} />
      <div class="row">
        <button type="button" class="primary" onClick={props.onDone}>
          {t('scim.done')}
        </button>
      </div>
    </div>
  );
}

/** Today as yyyy-mm-dd in local time (the date input's own format). */
function today(): string {
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}
