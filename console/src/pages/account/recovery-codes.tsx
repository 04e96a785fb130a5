// The recovery codes, shown once right after two-factor is turned on: a copy button,
// and "I have saved them" to move on (they are never shown again).
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';

export function RecoveryCodes(props: { codes: string[]; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // The form that had focus is gone: focus moves to what replaced it.
  useEffect(() => heading.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.codes.join('\n'));
      announce(t('common.copied'));
    } catch (error) {
      announce(problemText(error), 'error');
    }
  };
  return (
    <div class="stack">
      <p>{t('account.2fa.enabled')}</p>
      <h3 ref={heading} tabIndex={-1}>
        {t('account.2fa.codesTitle')}
      </h3>
      <p>{t('account.2fa.codesHelp')}</p>
      <ul class="recovery-codes mono">
        {props.codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          {t('account.2fa.copyCodes')}
        </button>
        <button type="button" class="primary" onClick={props.onDone}>
          {t('account.2fa.saved')}
        </button>
      </div>
    </div>
  );
}
