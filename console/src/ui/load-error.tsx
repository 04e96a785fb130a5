// A failed load inside one section of a page: the problem's text in an alert and a retry.
// ErrorView is for a whole page (its 404 and 403 views bring their own <h1>); a section
// that fails must not add a second heading to a page that already has one.
import { t } from '../i18n/index.js';
import { problemText } from './error-view.js';

export function LoadError(props: { error: unknown; retry: () => void }) {
  return (
    <div role="alert" class="error-box">
      <p>{t('app.error', { detail: problemText(props.error) })}</p>
      <button type="button" onClick={props.retry}>
        {t('app.retry')}
      </button>
    </div>
  );
}
