// Where the user writes: Enter sends, Shift+Enter starts a new line (and an IME's Enter
// composes). Send waits while an answer streams; Stop ends it. Errors are read out
// (role=alert) and what was typed stays.
import { useId } from 'preact/hooks';
import { t } from '../../i18n/index.js';

interface Props {
  busy: boolean;
  /** An answer is streaming: Stop is offered. */
  streaming: boolean;
  draft: string;
  setDraft: (text: string) => void;
  error: string;
  onSend: () => void;
  onStop: () => void;
}

export function Composer(props: Props) {
  const helpId = useId();
  const submit = (event: Event) => {
    event.preventDefault();
    if (!props.busy) props.onSend();
  };
  const keyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    if (!props.busy) props.onSend();
  };
  return (
    <form class="composer stack" onSubmit={submit}>
      <p role="alert" class="form-error">
        {props.error}
      </p>
      <label>
        {t('playground.message')}
        <textarea
          name="message"
          rows={3}
          value={props.draft}
          aria-describedby={helpId}
          onInput={(event) => props.setDraft(event.currentTarget.value)}
          onKeyDown={keyDown}
        />
      </label>
      <div class="row">
        <button type="submit" class="primary" disabled={props.busy || !props.draft.trim()}>
          {t('playground.send')}
        </button>
        {props.streaming ? (
          <button type="button" class="danger" onClick={props.onStop}>
            {t('playground.stop')}
          </button>
        ) : null}
        <span id={helpId} class="muted">
          {t('playground.messageHelp')}
        </span>
      </div>
    </form>
  );
}
