// The role mapping of a connection: rows of (IdP group → administrator or member), added
// and removed in place. An empty group name is left out; the server checks the rest.
import { t } from '../../i18n/index.js';
import { FieldError } from '../../ui/field-error.js';

export type MappedRole = 'admin' | 'member';
export interface MappingRow {
  /** Stable across edits, so a removed row never hands its focus to the next one. */
  key: number;
  group: string;
  role: MappedRole;
}

let nextKey = 1;
export const rowsOf = (mapping: Record<string, string>): MappingRow[] =>
  Object.entries(mapping).map(([group, role]) => ({ key: nextKey++, group, role: role === 'admin' ? 'admin' : 'member' }));

export function mappingOf(rows: MappingRow[]): Record<string, MappedRole> {
  const mapping: Record<string, MappedRole> = {};
  for (const row of rows) if (row.group.trim()) mapping[row.group.trim()] = row.role;
  return mapping;
}

export function RoleMappingEditor(props: { rows: MappingRow[]; onChange: (rows: MappingRow[]) => void; error?: string | undefined }) {
  const { rows } = props;
  const update = (key: number, change: Partial<MappingRow>) =>
    props.onChange(rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  const add = () => {
    const key = nextKey++;
    props.onChange([...rows, { key, group: '', role: 'member' }]);
    // Focus the new row's group field once it is there.
    requestAnimationFrame(() => document.getElementById(`sso-group-${key}`)?.focus());
  };
  const remove = (index: number) => {
    const next = rows.filter((_, i) => i !== index);
    props.onChange(next);
    requestAnimationFrame(() => {
      const neighbour = next[Math.min(index, next.length - 1)];
      document.getElementById(neighbour ? `sso-group-${neighbour.key}` : 'sso-add-group')?.focus();
    });
  };
  return (
    <fieldset class="stack" data-field="roleMapping" aria-describedby="sso-roleMapping-hint">
      <legend>{t('sso.form.roleMapping')}</legend>
      <p id="sso-roleMapping-hint" class="muted sso-flag-hint">
        {t('sso.form.roleMappingHint')}
      </p>
      <FieldError id="sso-roleMapping-error" message={props.error} />
      {rows.length === 0 ? <p class="muted sso-flag-hint">{t('sso.form.noMapping')}</p> : null}
      <ul class="sso-mapping">
        {rows.map((row, index) => (
          <li key={row.key} class="sso-mapping-row">
            <label>
              {t('sso.form.group', { n: index + 1 })}
              <input
                id={`sso-group-${row.key}`}
                value={row.group}
                maxLength={256}
                autocomplete="off"
                spellcheck={false}
                aria-invalid={props.error ? 'true' : undefined}
                aria-describedby={props.error ? 'sso-roleMapping-error' : undefined}
                onInput={(event) => update(row.key, { group: event.currentTarget.value })}
              />
            </label>
            <label>
              {t('sso.form.groupRole', { n: index + 1 })}
              <select value={row.role} onChange={(event) => update(row.key, { role: event.currentTarget.value as MappedRole })}>
                <option value="member">{t('sso.role.member')}</option>
                <option value="admin">{t('sso.role.admin')}</option>
              </select>
            </label>
            <button type="button" class="danger" onClick={() => remove(index)} aria-label={t('sso.form.removeGroup', { n: index + 1 })}>
              {t('sso.form.remove')}
            </button>
          </li>
        ))}
      </ul>
      <div class="row">
        <button type="button" id="sso-add-group" onClick={add}>
          {t('sso.form.addGroup')}
        </button>
      </div>
    </fieldset>
  );
}
