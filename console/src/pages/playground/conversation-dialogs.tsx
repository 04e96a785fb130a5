// Rename (PATCH {title}) and delete (DELETE, after a confirmation) of one conversation.
// A failure is shown in the dialog (role=alert) and keeps what was typed.
import { useEffect, useState } from 'preact/hooks';
import type { Conversation } from '../../../../src/areas/llm/conversations/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ConfirmDialog } from '../../ui/confirm-dialog.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';
import { announce } from '../../ui/notices.js';

interface Props {
  conversation: Conversation | null;
  onClose: () => void;
  onDone: () => void;
}

export const titleOf = (conversation: Conversation): string => conversation.title ?? t('playground.untitled');

const pathOf = (c: Conversation) => `/api/llm/v1/conversations/${encodeURIComponent(c.id)}`;

export function RenameConversation(props: Props) {
  const { conversation } = props;
  const [title, setTitle] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setTitle(conversation?.title ?? '');
    setError('');
  }, [conversation?.id]);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!conversation) return;
    setBusy(true);
    setError('');
    try {
      const renamed = await api<Conversation>(pathOf(conversation), { method: 'PATCH', body: { title: title.trim() } });
      announce(t('playground.list.renamed', { title: titleOf(renamed) }));
      props.onDone();
      props.onClose();
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('playground.list.renameTitle')} open={conversation !== null} onClose={props.onClose}>
      <form class="stack" onSubmit={submit}>
        <label>
          {t('playground.list.newTitle')}
          <input name="title" required maxLength={200} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        </label>
        <FormFooter error={error} submitLabel={t('common.save')} disabled={busy || !title.trim()} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function DeleteConversation(props: Props) {
  const { conversation } = props;
  const remove = async () => {
    if (!conversation) return;
    await api<void>(pathOf(conversation), { method: 'DELETE' });
    announce(t('playground.list.deleted', { title: titleOf(conversation) }));
    props.onDone();
    props.onClose();
  };
  return (
    <ConfirmDialog
      title={t('playground.list.deleteTitle')}
      open={conversation !== null}
      message={<p>{conversation ? t('playground.list.deleteConfirm', { title: titleOf(conversation) }) : null}</p>}
      confirmLabel={t('playground.list.delete')}
      onConfirm={remove}
      onClose={props.onClose}
    />
  );
}
