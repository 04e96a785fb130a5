// A value to copy somewhere else (a URL to enter at an identity provider, a token shown
// once): a read-only field, selected on focus, with a Copy button beside it. When the
// clipboard is refused, the value is selected for the reader to copy themselves.
import { useId, useRef } from 'preact/hooks';
import { t } from '../i18n/index.js';
import { announce } from './notices.js';

export async function copyText(value: string, field: HTMLInputElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(value);
    announce(t('common.copied'));
  } catch {
    field?.focus();
    field?.select();
    announce(t('common.copyFailed'), 'error');
  }
}

export function CopyField(props: {
  label: string;
  value: string;
  /** The Copy button's accessible name when "Copy" alone would be ambiguous (several on a page). */
  copyLabel?: string;
  describedBy?: string;
  class?: string;
}) {
  const field = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <div class={`copy-field ${props.class ?? ''}`}>
      <label for={id}>{props.label}</label>
      <div class="copy-row">
        <input
          id={id}
          ref={field}
          class="mono"
          readOnly
          value={props.value}
          spellcheck={false}
          autocomplete="off"
          aria-describedby={props.describedBy}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button
          type="button"
          aria-label={props.copyLabel ?? t('common.copyNamed', { name: props.label })}
          onClick={() => void copyText(props.value, field.current)}
        >
          {t('common.copy')}
        </button>
      </div>
    </div>
  );
}
