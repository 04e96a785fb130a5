// /users: the tenant's users, one server page at a time with a search box; create a
// user, and per user a dialog for role, e-mail, access and a password reset.
import './users.css';
import { useState } from 'preact/hooks';
import type { User } from '../../../../src/areas/auth/users/schemas.js';
import { sessionState } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { formatDate } from '../../ui/format.js';
import { PageHeader } from '../../ui/page-header.js';
import { type Column, PagedTable } from '../../ui/paged-table.js';
import { CreateUserDialog } from './create-user-dialog.js';
import { EditUserDialog } from './edit-user-dialog.js';
import { isPlatformAdmin } from './roles.js';

const ROLE_LABELS: Record<string, Parameters<typeof t>[0]> = {
  member: 'users.role.member',
  admin: 'users.role.admin',
  platform_admin: 'users.role.platform_admin',
};

export function UsersPage() {
  const state = sessionState();
  const viewer = state.status === 'signedIn' ? state.user : null;
  const usersPath = `/api/auth/tenants/${encodeURIComponent(viewer?.tenantId ?? '')}/users`;
  const userPath = (user: User) => `${usersPath}/${encodeURIComponent(user.id)}`;
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<User | null>(null);
  const refresh = () => setVersion((n) => n + 1);

  const columns: Column<User>[] = [
    {
      header: t('users.col.username'),
      rowHeader: true,
      cell: (user) => (user.id === viewer?.id ? `${user.username} ${t('users.you')}` : user.username),
    },
    {
      header: t('users.col.email'),
      cell: (user) =>
        user.email ? (
          <>
            {user.email}{' '}
            {user.emailVerified ? <span class="badge ok">{t('users.verified')}</span> : <span class="badge">{t('users.unverified')}</span>}
          </>
        ) : (
          t('users.noEmail')
        ),
    },
    { header: t('users.col.roles'), cell: (user) => rolesText(user.roles) },
    {
      header: t('users.col.status'),
      cell: (user) => <span class={user.status === 'active' ? 'badge ok' : 'badge bad'}>{t(`users.status.${user.status}`)}</span>,
    },
    { header: t('users.col.twoFactor'), cell: (user) => (user.twoFactorEnabled ? t('users.twoFactor.on') : t('users.twoFactor.off')) },
    { header: t('users.col.created'), cell: (user) => formatDate(user.createdAt) },
    {
      header: t('users.col.actions'),
      cell: (user) => (
        <button type="button" aria-label={t('users.editLabel', { username: user.username })} onClick={() => setEditing(user)}>
          {t('users.edit')}
        </button>
      ),
    },
  ];

  return (
    <section class="page stack">
      <PageHeader title={t('users.title')} actionLabel={t('users.create')} onAction={() => setCreating(true)} />
      <p class="muted">{t('users.intro')}</p>
      <PagedTable<User> path={usersPath} label={t('users.listLabel')} columns={columns} rowKey={(user) => user.id} version={version} />
      <CreateUserDialog usersPath={usersPath} open={creating} onClose={() => setCreating(false)} onCreated={refresh} />
      <EditUserDialog
        userPath={userPath}
        target={editing}
        selfId={viewer?.id ?? ''}
        viewerIsPlatformAdmin={isPlatformAdmin(viewer?.roles ?? [])}
        onClose={() => setEditing(null)}
        onChanged={refresh}
      />
    </section>
  );
}

/** "Administrator, Member": the roles as words, the most powerful first. */
function rolesText(roles: readonly string[]): string {
  const order = Object.keys(ROLE_LABELS).reverse();
  return [...roles]
    .sort((a, b) => order.indexOf(a) - order.indexOf(b))
    .map((role) => (ROLE_LABELS[role] ? t(ROLE_LABELS[role]) : role))
    .join(', ');
}
