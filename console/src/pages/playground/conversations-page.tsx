// The user's own conversations, paged on the server (newest activity first), with
// continue (back into the playground), rename and delete.
import { useState } from 'preact/hooks';
import type { Conversation } from '../../../../src/areas/llm/conversations/schemas.js';
import { t } from '../../i18n/index.js';
import { navigate } from '../../router.js';
import { formatDate, formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { type Column, PagedTable } from '../../ui/paged-table.js';
import { DeleteConversation, RenameConversation, titleOf } from './conversation-dialogs.js';
import './playground.css';

type Action = { kind: 'rename' | 'delete'; conversation: Conversation } | null;

export function ConversationsPage() {
  const [version, setVersion] = useState(0);
  const [action, setAction] = useState<Action>(null);
  const changed = () => setVersion((n) => n + 1);
  const columns: Column<Conversation>[] = [
    {
      header: t('playground.list.colTitle'),
      rowHeader: true,
      cell: (c) => <Link href={`/playground/${encodeURIComponent(c.id)}`}>{titleOf(c)}</Link>,
    },
    { header: t('playground.list.colMessages'), cell: (c) => formatNumber(c.messageCount) },
    { header: t('playground.list.colActivity'), cell: (c) => formatDate(c.updatedAt) },
    {
      header: t('common.actions'),
      cell: (c) => (
        <div class="row">
          <Link href={`/playground/${encodeURIComponent(c.id)}`}>
            {t('playground.list.continue')}
            <span class="visually-hidden"> {titleOf(c)}</span>
          </Link>
          <button
            type="button"
            aria-label={t('playground.list.renameLabel', { title: titleOf(c) })}
            onClick={() => setAction({ kind: 'rename', conversation: c })}
          >
            {t('playground.list.rename')}
          </button>
          <button
            type="button"
            class="danger"
            aria-label={t('playground.list.deleteLabel', { title: titleOf(c) })}
            onClick={() => setAction({ kind: 'delete', conversation: c })}
          >
            {t('playground.list.delete')}
          </button>
        </div>
      ),
    },
  ];
  return (
    <section class="page">
      <h1>{t('playground.list.title')}</h1>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => navigate('/playground')}>
          {t('playground.list.newChat')}
        </button>
      </div>
      <PagedTable
        path="/api/llm/v1/conversations"
        label={t('playground.list.what')}
        columns={columns}
        rowKey={(c) => c.id}
        version={version}
      />
      <RenameConversation
        conversation={action?.kind === 'rename' ? action.conversation : null}
        onClose={() => setAction(null)}
        onDone={changed}
      />
      <DeleteConversation
        conversation={action?.kind === 'delete' ? action.conversation : null}
        onClose={() => setAction(null)}
        onDone={changed}
      />
    </section>
  );
}
