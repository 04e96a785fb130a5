// What a page shows when its load failed: "not found" for a 404 (also another tenant's
// ids: the API never says they exist), "not allowed" for a 403, else the problem's detail.
import { isApiError } from '../api/client.js';
import { t } from '../i18n/index.js';

export function NotFound() {
  return (
    <section class="page">
      <h1>{t('app.notFound')}</h1>
      <p>{t('app.notFoundDetail')}</p>
    </section>
  );
}

export function NotAllowed() {
  return (
    <section class="page">
      <h1>{t('app.notAllowed')}</h1>
      <p>{t('app.notAllowedDetail')}</p>
    </section>
  );
}

export function ErrorView(props: { error: unknown; retry?: () => void }) {
  if (isApiError(props.error, 404)) return <NotFound />;
  if (isApiError(props.error, 403)) return <NotAllowed />;
  const detail = props.error instanceof Error ? props.error.message : String(props.error);
  return (
    <div role="alert" class="error-box">
      <p>{t('app.error', { detail })}</p>
      {props.retry ? (
        <button type="button" onClick={props.retry}>
          {t('app.retry')}
        </button>
      ) : null}
    </div>
  );
}

/** The message to show for a failed action (validation errors name their field). */
export function problemText(error: unknown): string {
  if (isApiError(error)) {
    const fields = error.problem.errors?.map((e) => `${e.field}: ${e.message}`).join('; ');
    return fields ? `${error.message} (${fields})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
