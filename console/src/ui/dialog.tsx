// A modal on the native <dialog>: showModal() makes the rest of the page inert and keeps
// focus inside; Escape closes it. On close, focus returns to what opened it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../i18n/index.js';

export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      opener.current = document.activeElement;
      dialog.showModal();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  const closed = () => {
    if (opener.current instanceof HTMLElement) opener.current.focus();
    if (props.open) props.onClose();
  };
  const titleId = `dialog-${props.title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={closed} class="dialog">
      <div class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="quiet" onClick={() => ref.current?.close()} aria-label={t('common.close')}>
          ×
        </button>
      </div>
      {props.open ? props.children : null}
    </dialog>
  );
}
