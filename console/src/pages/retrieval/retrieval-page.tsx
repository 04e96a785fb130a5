// Being written: the page's heading only, until its engineer lands it.
import { t } from '../../i18n/index.js';

export function RetrievalPage() {
  return (
    <section class="page">
      <h1>{t('nav.retrieval')}</h1>
    </section>
  );
}
