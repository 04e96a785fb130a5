// The end of every dialog form: the error line (role=alert, so a failure is read out
// where it happened), then the submit button and a cancel that closes without saving.
import { t } from '../i18n/index.js';

export function FormFooter(props: {
  error: string;
  submitLabel: string;
  /** While the request runs the submit button is disabled, so a double click sends one. */
  disabled: boolean;
  /** 'danger' for an action that destroys something. */
  tone?: 'primary' | 'danger';
  onCancel: () => void;
}) {
  return (
    <>
      <p role="alert" class="form-error">
        {props.error}
      </p>
      <div class="row">
        <button type="submit" class={props.tone ?? 'primary'} disabled={props.disabled}>
          {props.submitLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </>
  );
}
