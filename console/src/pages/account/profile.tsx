// Who is signed in: the session's user record.
import type { User } from '../../api/session.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { formatDate } from '../../ui/format.js';

const roleName = (role: string) => (['member', 'admin', 'platform_admin'].includes(role) ? t(`account.role.${role}` as MessageKey) : role);

export function Profile(props: { user: User }) {
  const { user } = props;
  return (
    <section class="card" aria-labelledby="profile-title">
      <h2 id="profile-title">{t('account.profile.title')}</h2>
      <dl class="account-facts">
        <div>
          <dt>{t('account.profile.username')}</dt>
          <dd>{user.username}</dd>
        </div>
        <div>
          <dt>{t('account.profile.email')}</dt>
          <dd>{user.email ?? <span class="muted">{t('account.profile.noEmail')}</span>}</dd>
        </div>
        <div>
          <dt>{t('account.profile.roles')}</dt>
          <dd>{user.roles.map(roleName).join(', ')}</dd>
        </div>
        <div>
          <dt>{t('account.profile.tenant')}</dt>
          <dd class="mono">{user.tenantId}</dd>
        </div>
        <div>
          <dt>{t('account.profile.since')}</dt>
          <dd>{formatDate(user.createdAt)}</dd>
        </div>
      </dl>
    </section>
  );
}
