// "Delete this?": a modal that runs the action on confirm and keeps a failure inside the
// dialog (the action stays open to retry or cancel). The action itself closes the dialog
// on success, since only the page knows what to refresh and announce.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog } from './dialog.js';
import { problemText } from './error-view.js';
import { FormFooter } from './form-footer.js';

export function ConfirmDialog(props: {
  title: string;
  open: boolean;
  /** The question, and any warning under it. */
  message: ComponentChildren;
  confirmLabel: string;
  /** The confirm button's look: 'danger' (the default) for what destroys or cuts off. */
  tone?: 'primary' | 'danger';
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  return (
    <Dialog title={props.title} open={props.open} onClose={props.onClose}>
      <ConfirmForm {...props} />
    </Dialog>
  );
}

// Mounted only while the dialog is open, so each opening starts without an old error.
function ConfirmForm(props: {
  message: ComponentChildren;
  confirmLabel: string;
  tone?: 'primary' | 'danger';
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const confirm = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      await props.onConfirm();
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={confirm}>
      {props.message}
      <FormFooter error={error} submitLabel={props.confirmLabel} disabled={busy} tone={props.tone ?? 'danger'} onCancel={props.onClose} />
    </form>
  );
}
