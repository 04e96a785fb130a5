// One user's dialog: role and e-mail (and whether it is verified), access (disable / enable) and a password reset,
// each its own form and PATCH, each with its own alert so a refusal names what failed.
// The server has the last word (your own account, a platform admin's account): the
// hints here only say in advance what it will refuse.
import { useState } from 'preact/hooks';
import type { User, UserPatch } from '../../../../src/areas/auth/users/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { isPlatformAdmin, type OfferedRole, offeredRoleOf, rolesFor, sameRoles } from './roles.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, RoleSelect } from './user-fields.js';

interface Props {
  userPath: (user: User) => string;
  target: User | null;
  selfId: string;
  viewerIsPlatformAdmin: boolean;
  onClose: () => void;
  onChanged: () => void;
}

export function EditUserDialog(props: Props) {
  const title = props.target ? t('users.editTitle', { username: props.target.username }) : t('users.edit');
  return (
    <Dialog title={title} open={props.target !== null} onClose={props.onClose}>
      {props.target ? <EditUser key={props.target.id} {...props} target={props.target} /> : null}
    </Dialog>
  );
}

/** A PATCH with its own busy flag and error, keeping the dialog's record current. */
function usePatch(path: string, onSaved: (user: User) => void) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const send = async (patch: UserPatch): Promise<boolean> => {
    setBusy(true);
    setError('');
    try {
      onSaved(await api<User>(path, { method: 'PATCH', body: patch }));
      return true;
    } catch (failure) {
      setError(problemText(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, send };
}

function EditUser(props: Props & { target: User }) {
  const [user, setUser] = useState(props.target);
  const saved = (next: User) => {
    setUser(next);
    props.onChanged();
  };
  const path = props.userPath(user);
  const details = usePatch(path, saved);
  const access = usePatch(path, saved);
  const password = usePatch(path, saved);
  const self = user.id === props.selfId;
  const [emailText, setEmailText] = useState(user.email ?? '');
  const [verified, setVerified] = useState(user.emailVerified);
  // Typing another address unticks "verified": the tick was for the old one.
  const editEmail = (value: string) => {
    setEmailText(value);
    setVerified(value.trim() === (user.email ?? '') ? user.emailVerified : false);
  };
  const locked = isPlatformAdmin(user.roles) && !props.viewerIsPlatformAdmin;

  const saveDetails = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const roles = rolesFor(String(form.get('role')) as OfferedRole, user.roles);
    const email = String(form.get('email') ?? '').trim() || null;
    const patch: UserPatch = {};
    if (!sameRoles(roles, user.roles)) patch.roles = roles;
    // A changed address is unverified unless the administrator vouches for the new one.
    if (email !== user.email) {
      patch.email = email;
      if (email && verified) patch.emailVerified = true;
    } else if (email && verified !== user.emailVerified) patch.emailVerified = verified;
    if (Object.keys(patch).length === 0) return announce(t('users.nothingChanged'));
    if (await details.send(patch)) announce(t('users.saved', { username: user.username }));
  };

  const toggleAccess = async () => {
    const disabling = user.status === 'active';
    if (await access.send({ status: disabling ? 'disabled' : 'active' }))
      announce(t(disabling ? 'users.disabled' : 'users.enabled', { username: user.username }));
  };

  const resetPassword = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    if (await password.send({ password: String(new FormData(form).get('password') ?? '') })) {
      form.reset();
      announce(t('users.passwordReset', { username: user.username }));
    }
  };

  return (
    <div class="stack">
      {locked ? <p class="warning-note">{t('users.platformAdminNote')}</p> : null}
      {self ? <p class="warning-note">{t('users.selfDisable')}</p> : null}

      <form onSubmit={saveDetails}>
        <fieldset class="stack" disabled={locked}>
          <legend>{t('users.detailsLegend')}</legend>
          <RoleSelect idPrefix="edit-user" initial={offeredRoleOf(user.roles)} />
          <label>
            {t('users.emailEdit')}
            <input
              name="email"
              type="email"
              maxLength={254}
              value={emailText}
              onInput={(event) => editEmail(event.currentTarget.value)}
              autocomplete="off"
              aria-describedby="edit-user-email-hint"
            />
          </label>
          <p id="edit-user-email-hint" class="muted field-hint">
            {t('users.emailEditHint')}
          </p>
          <label class="inline">
            <input
              name="emailVerified"
              type="checkbox"
              checked={verified && emailText.trim() !== ''}
              disabled={emailText.trim() === ''}
              onChange={(event) => setVerified(event.currentTarget.checked)}
              aria-describedby="edit-user-verified-hint"
            />
            {t('users.emailVerified')}
          </label>
          <p id="edit-user-verified-hint" class="muted field-hint">
            {t('users.emailVerifiedHint')}
          </p>
          <p role="alert" class="form-error">
            {details.error}
          </p>
          <div class="row">
            <button type="submit" class="primary" disabled={details.busy}>
              {t('users.saveDetails')}
            </button>
          </div>
        </fieldset>
      </form>

      <fieldset class="stack" disabled={locked}>
        <legend>{t('users.statusLegend')}</legend>
        <p class="user-status">
          <span class={user.status === 'active' ? 'badge ok' : 'badge bad'}>{t(`users.status.${user.status}`)}</span>{' '}
          {user.status === 'active' ? t('users.statusActive') : t('users.statusDisabled')}
        </p>
        <p id="edit-user-access-hint" class="muted field-hint">
          {t('users.disableHint')}
        </p>
        <p role="alert" class="form-error">
          {access.error}
        </p>
        <div class="row">
          <button
            type="button"
            class={user.status === 'active' ? 'danger' : ''}
            disabled={access.busy || (self && user.status === 'active')}
            aria-describedby="edit-user-access-hint"
            onClick={() => void toggleAccess()}
          >
            {user.status === 'active' ? t('users.disable') : t('users.enable')}
          </button>
        </div>
      </fieldset>

      <form onSubmit={resetPassword}>
        <fieldset class="stack" disabled={locked}>
          <legend>{t('users.passwordLegend')}</legend>
          <label>
            {t('users.newPassword')}
            <input
              name="password"
              type="password"
              required
              minLength={PASSWORD_MIN_LENGTH}
              maxLength={PASSWORD_MAX_LENGTH}
              autocomplete="new-password"
              aria-describedby="edit-user-password-hint"
            />
          </label>
          <p id="edit-user-password-hint" class="muted field-hint">
            {t('users.resetHint')} {t('users.passwordHint', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })}
          </p>
          <p role="alert" class="form-error">
            {password.error}
          </p>
          <div class="row">
            <button type="submit" disabled={password.busy}>
              {t('users.resetPassword')}
            </button>
          </div>
        </fieldset>
      </form>
    </div>
  );
}
