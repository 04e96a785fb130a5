// Fields the create and edit dialogs share: the role picker (member or administrator
// only) and the password rules.
import type { PASSWORD_MAX_LENGTH as SERVER_MAX, PASSWORD_MIN_LENGTH as SERVER_MIN } from '../../../../src/areas/auth/users/schemas.js';
import { t } from '../../i18n/index.js';
import type { OfferedRole } from './roles.js';

// The server's numbers, typed by its literal constants: tsc fails if they drift (a
// value import would pull TypeBox into the bundle).
export const PASSWORD_MIN_LENGTH: typeof SERVER_MIN = 12;
export const PASSWORD_MAX_LENGTH: typeof SERVER_MAX = 256;

const OFFERED: OfferedRole[] = ['member', 'admin'];

export function RoleSelect(props: { idPrefix: string; initial: OfferedRole; disabled?: boolean }) {
  const hint = `${props.idPrefix}-role-hint`;
  return (
    <>
      <label>
        {t('users.role')}
        <select name="role" defaultValue={props.initial} disabled={props.disabled} aria-describedby={hint}>
          {OFFERED.map((role) => (
            <option key={role} value={role}>
              {t(`users.role.${role}`)}
            </option>
          ))}
        </select>
      </label>
      <p id={hint} class="muted field-hint">
        {t('users.roleHint')}
      </p>
    </>
  );
}
