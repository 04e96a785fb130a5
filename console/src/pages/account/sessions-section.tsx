// The account's active sessions (one per sign-in): end any other one, or sign out
// everywhere (this session included, so this tab signs out too).
import type { SessionRecord } from './session-record.js';
import { api } from '../../api/client.js';
import { signOut } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { announce } from '../../ui/notices.js';
import { useLoad } from '../../ui/use-load.js';
import { LoadError } from '../../ui/load-error.js';
import { clientName } from './user-agent.js';

export function SessionsSection(props: { version: number }) {
  const sessions = useLoad((signal) => api<{ data: SessionRecord[] }>('/api/auth/sessions', { signal }), [props.version]);
  const end = async (session: SessionRecord) => {
    try {
      await api<void>(`/api/auth/sessions/${encodeURIComponent(session.id)}`, { method: 'DELETE' });
      announce(t('account.sessions.ended'));
      sessions.reload();
    } catch (error) {
      announce(problemText(error), 'error');
    }
  };
  const signOutEverywhere = async () => {
    if (!confirm(t('account.sessions.confirmSignOutAll'))) return;
    try {
      await api<void>('/api/auth/logout-all', { method: 'POST' });
    } catch (error) {
      announce(problemText(error), 'error');
      return;
    }
    await signOut();
  };
  const rows = sessions.data?.data ?? [];
  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">{t('account.sessions.title')}</h2>
      <p class="muted">{t('account.sessions.help')}</p>
      {sessions.error ? <LoadError error={sessions.error} retry={sessions.reload} /> : null}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: at 390 px the table scrolls sideways and a keyboard must reach it (axe: scrollable-region-focusable) */}
      <section class="table-wrap" aria-labelledby="sessions-title" tabIndex={0}>
        <table aria-busy={sessions.loading}>
          <thead>
            <tr>
              <th scope="col">{t('account.sessions.client')}</th>
              <th scope="col">{t('account.sessions.address')}</th>
              <th scope="col">{t('account.sessions.created')}</th>
              <th scope="col">{t('account.sessions.lastUsed')}</th>
              <th scope="col">{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((session) => {
              const client = clientName(session.userAgent);
              return (
                <tr key={session.id}>
                  <th scope="row" class="session-client">
                    {client}
                    {session.current ? <span class="badge ok"> {t('account.sessions.current')}</span> : null}
                  </th>
                  <td class="mono">{session.address ?? t('account.sessions.unknown')}</td>
                  <td>{formatDate(session.createdAt)}</td>
                  <td>{formatDate(session.lastUsedAt)}</td>
                  <td>
                    {session.current ? null : (
                      <button
                        type="button"
                        class="danger"
                        onClick={() => void end(session)}
                        aria-label={t('account.sessions.endNamed', { client, when: formatDate(session.createdAt) })}
                      >
                        {t('account.sessions.end')}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
      {!sessions.loading && !sessions.error && rows.length === 0 ? <p class="muted">{t('account.sessions.none')}</p> : null}
      <div class="toolbar">
        <button type="button" class="danger" onClick={() => void signOutEverywhere()}>
          {t('account.sessions.signOutAll')}
        </button>
      </div>
    </section>
  );
}
