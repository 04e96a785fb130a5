// The form of an SSO connection, for create (POST, every field) and edit (PATCH, only
// what changed; an empty client secret keeps the stored one, which is never shown).
// A 400 puts each message under the field it names; what the browser can check itself
// (required fields, an URL) it checks before sending.
import { useRef, useState } from 'preact/hooks';
import type { NewSsoConnection, SsoConnection, SsoConnectionPatch } from '../../../../src/areas/auth/sso/schemas.js';
import { api } from '../../api/client.js';
import { sessionState } from '../../api/session.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { FieldError } from '../../ui/field-error.js';
import { type FormProblem, formProblem, invalidProps } from '../../ui/field-errors.js';
import { FormFooter } from '../../ui/form-footer.js';
import { RoleMappingEditor, type MappingRow, mappingOf, rowsOf } from './role-mapping-editor.js';

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
const FIELDS = [
  'name',
  'issuer',
  'clientId',
  'clientSecret',
  'tokenEndpointAuthMethod',
  'scopes',
  'allowedEmailDomains',
  'groupsClaim',
  'subjectClaim',
  'roleMapping',
  'jit',
  'ssoOnly',
  'trustIdpMfa',
  'enabled',
] as const;
type Field = (typeof FIELDS)[number];
const FLAGS = ['jit', 'ssoOnly', 'trustIdpMfa', 'enabled'] as const;

const words = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item, i) => item === b[i]);
const sameMapping = (a: Record<string, string>, b: Record<string, string>) =>
  sameList(Object.keys(a).sort(), Object.keys(b).sort()) && Object.entries(a).every(([group, role]) => b[group] === role);

type Values = Required<Omit<NewSsoConnection, 'clientSecret'>> & { clientSecret: string };

function read(form: HTMLFormElement, rows: MappingRow[]): Values {
  const data = new FormData(form);
  const text = (name: Field) => String(data.get(name) ?? '').trim();
  return {
    name: text('name'),
    issuer: text('issuer'),
    clientId: text('clientId'),
    clientSecret: String(data.get('clientSecret') ?? ''),
    tokenEndpointAuthMethod: text('tokenEndpointAuthMethod') === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
    scopes: words(text('scopes')),
    allowedEmailDomains: words(text('allowedEmailDomains')),
    groupsClaim: text('groupsClaim') || 'groups',
    subjectClaim: text('subjectClaim') || 'sub',
    roleMapping: mappingOf(rows),
    jit: data.get('jit') === 'on',
    ssoOnly: data.get('ssoOnly') === 'on',
    trustIdpMfa: data.get('trustIdpMfa') === 'on',
    enabled: data.get('enabled') === 'on',
  };
}

/** What differs from the stored connection (the secret only when one was typed). */
function patchOf(values: Values, current: SsoConnection): SsoConnectionPatch {
  const patch: SsoConnectionPatch = {};
  if (values.name !== current.name) patch.name = values.name;
  if (values.issuer !== current.issuer) patch.issuer = values.issuer;
  if (values.clientId !== current.clientId) patch.clientId = values.clientId;
  if (values.clientSecret) patch.clientSecret = values.clientSecret;
  if (values.tokenEndpointAuthMethod !== current.tokenEndpointAuthMethod) patch.tokenEndpointAuthMethod = values.tokenEndpointAuthMethod;
  if (!sameList(values.scopes, current.scopes)) patch.scopes = values.scopes;
  if (!sameList(values.allowedEmailDomains, current.allowedEmailDomains)) patch.allowedEmailDomains = values.allowedEmailDomains;
  if (values.groupsClaim !== current.groupsClaim) patch.groupsClaim = values.groupsClaim;
  if (values.subjectClaim !== current.subjectClaim) patch.subjectClaim = values.subjectClaim;
  if (!sameMapping(values.roleMapping, current.roleMapping)) patch.roleMapping = values.roleMapping;
  for (const flag of FLAGS) if (values[flag] !== current[flag]) patch[flag] = values[flag];
  return patch;
}

interface Props {
  /** …/sso/connections of the tenant. */
  base: string;
  /** The connection being edited; absent: a new one. */
  current?: SsoConnection;
  onSaved: (connection: SsoConnection, created: boolean) => void;
  onNothingChanged: () => void;
  onCancel: () => void;
}

export function ConnectionForm(props: Props) {
  const { current } = props;
  const [rows, setRows] = useState<MappingRow[]>(() => rowsOf(current?.roleMapping ?? {}));
  const [problem, setProblem] = useState<FormProblem>({ fields: {}, summary: '' });
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  // SSO only leaves administrators a password sign-in that needs TOTP: say so to one who has none.
  const [ssoOnly, setSsoOnly] = useState(current?.ssoOnly ?? false);
  const viewer = sessionState();
  const viewerHasTotp = viewer.status === 'signedIn' && viewer.user.twoFactorEnabled;
  const submit = async (event: Event) => {
    event.preventDefault();
    const values = read(event.currentTarget as HTMLFormElement, rows);
    const duplicate = rows.map((row) => row.group.trim()).find((group, i, all) => group && all.indexOf(group) !== i);
    if (duplicate) {
      setProblem({ fields: { roleMapping: t('sso.form.duplicateGroup', { group: duplicate }) }, summary: t('sso.form.checkFields') });
      return;
    }
    const patch = current ? patchOf(values, current) : undefined;
    if (patch && Object.keys(patch).length === 0) return props.onNothingChanged();
    setBusy(true);
    setProblem({ fields: {}, summary: '' });
    try {
      const saved = current
        ? await api<SsoConnection>(`${props.base}/${encodeURIComponent(current.id)}`, { method: 'PATCH', body: patch })
        : await api<SsoConnection>(props.base, { method: 'POST', body: values satisfies NewSsoConnection });
      props.onSaved(saved, !current);
    } catch (failure) {
      const next = formProblem(failure, FIELDS, t('sso.form.checkFields'));
      setProblem(next);
      setBusy(false);
      // Focus the first field the server refused, where its message is.
      const first = FIELDS.find((name) => next.fields[name]);
      if (first) form.current?.querySelector<HTMLElement>(`[name="${first}"], [data-field="${first}"] input`)?.focus();
    }
  };

  const f = problem.fields;
  const text = (
    name: Field,
    label: MessageKey,
    options: { hint?: MessageKey; value?: string; required?: boolean; type?: 'text' | 'url'; max?: number; placeholder?: string } = {},
  ) => {
    const id = `sso-${name}`;
    const hintId = options.hint ? `${id}-hint` : undefined;
    return (
      <>
        <label>
          {t(label)}
          <input
            id={id}
            name={name}
            type={(options.type ?? 'text') as 'text'}
            required={options.required}
            maxLength={options.max}
            defaultValue={options.value ?? ''}
            placeholder={options.placeholder}
            autocomplete="off"
            autocapitalize="none"
            spellcheck={false}
            {...invalidProps(f, name, `${id}-error`, hintId)}
          />
        </label>
        <FieldError id={`${id}-error`} message={f[name]} />
        {options.hint ? (
          <p id={hintId} class="muted field-hint">
            {t(options.hint)}
          </p>
        ) : null}
      </>
    );
  };
  const flag = (name: (typeof FLAGS)[number], label: MessageKey, hint: MessageKey, checked: boolean) => {
    const id = `sso-${name}`;
    return (
      <div class="sso-flag">
        <label class="inline">
          <input
            id={id}
            type="checkbox"
            name={name}
            defaultChecked={checked}
            onChange={name === 'ssoOnly' ? (event) => setSsoOnly(event.currentTarget.checked) : undefined}
            {...invalidProps(f, name, `${id}-error`, `${id}-hint`)}
          />
          {t(label)}
        </label>
        <FieldError id={`${id}-error`} message={f[name]} />
        <p id={`${id}-hint`} class="muted sso-flag-hint">
          {t(hint)}
        </p>
      </div>
    );
  };

  return (
    <form ref={form} class="stack" onSubmit={submit}>
      <fieldset class="stack">
        <legend>{t('sso.form.provider')}</legend>
        {text('name', 'sso.form.name', { required: true, max: 100, value: current?.name, hint: 'sso.form.nameHint' })}
        {text('issuer', 'sso.form.issuer', {
          required: true,
          max: 2000,
          type: 'url',
          value: current?.issuer,
          hint: 'sso.form.issuerHint',
          placeholder: 'https://login.example.com/realms/acme',
        })}
        {text('clientId', 'sso.form.clientId', { required: true, max: 1000, value: current?.clientId })}
        <label>
          {t('sso.form.clientSecret')}
          <input
            id="sso-clientSecret"
            name="clientSecret"
            type="password"
            required={!current}
            maxLength={8192}
            autocomplete="new-password"
            placeholder={current ? t('sso.form.clientSecretUnchanged') : undefined}
            {...invalidProps(f, 'clientSecret', 'sso-clientSecret-error', 'sso-clientSecret-hint')}
          />
        </label>
        <FieldError id="sso-clientSecret-error" message={f.clientSecret} />
        <p id="sso-clientSecret-hint" class="muted field-hint">
          {t(current ? 'sso.form.clientSecretKeep' : 'sso.form.clientSecretHint')}
        </p>
        <label>
          {t('sso.form.tokenAuth')}
          <select
            id="sso-tokenEndpointAuthMethod"
            name="tokenEndpointAuthMethod"
            defaultValue={current?.tokenEndpointAuthMethod ?? 'client_secret_basic'}
            {...invalidProps(f, 'tokenEndpointAuthMethod', 'sso-tokenEndpointAuthMethod-error', 'sso-tokenEndpointAuthMethod-hint')}
          >
            <option value="client_secret_basic">{t('sso.form.tokenAuth.basic')}</option>
            <option value="client_secret_post">{t('sso.form.tokenAuth.post')}</option>
          </select>
        </label>
        <FieldError id="sso-tokenEndpointAuthMethod-error" message={f.tokenEndpointAuthMethod} />
        <p id="sso-tokenEndpointAuthMethod-hint" class="muted field-hint">
          {t('sso.form.tokenAuthHint')}
        </p>
        {text('scopes', 'sso.form.scopes', { value: (current?.scopes ?? DEFAULT_SCOPES).join(' '), hint: 'sso.form.scopesHint' })}
      </fieldset>

      <fieldset class="stack">
        <legend>{t('sso.form.access')}</legend>
        {text('allowedEmailDomains', 'sso.form.domains', {
          value: current?.allowedEmailDomains.join(' '),
          hint: 'sso.form.domainsHint',
          placeholder: 'example.com',
        })}
        {flag('jit', 'sso.form.jit', 'sso.form.jitHint', current?.jit ?? false)}
        {flag('ssoOnly', 'sso.form.ssoOnly', 'sso.form.ssoOnlyHint', current?.ssoOnly ?? false)}
        {ssoOnly && !viewerHasTotp ? (
          <p class="warning-note" role="status">
            {t('sso.form.ssoOnlyNoTotp')}
          </p>
        ) : null}
        {flag('trustIdpMfa', 'sso.form.trustIdpMfa', 'sso.form.trustIdpMfaHint', current?.trustIdpMfa ?? false)}
        {flag('enabled', 'sso.form.enabled', 'sso.form.enabledHint', current?.enabled ?? true)}
      </fieldset>

      <fieldset class="stack">
        <legend>{t('sso.form.claims')}</legend>
        {text('groupsClaim', 'sso.form.groupsClaim', {
          value: current?.groupsClaim ?? 'groups',
          hint: 'sso.form.groupsClaimHint',
          max: 200,
        })}
        {text('subjectClaim', 'sso.form.subjectClaim', {
          value: current?.subjectClaim ?? 'sub',
          hint: 'sso.form.subjectClaimHint',
          max: 200,
        })}
        <RoleMappingEditor rows={rows} onChange={setRows} error={f.roleMapping} />
      </fieldset>

      <FormFooter
        error={problem.summary}
        submitLabel={busy ? t('sso.form.saving') : t(current ? 'sso.form.save' : 'sso.form.create')}
        disabled={busy}
        onCancel={props.onCancel}
      />
    </form>
  );
}
