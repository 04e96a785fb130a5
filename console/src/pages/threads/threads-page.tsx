// Being written: the page's heading only, until its engineer lands it.
import { t } from '../../i18n/index.js';

export function ThreadsPage(props: { threadId?: string | undefined }) {
  void props;
  return (
    <section class="page">
      <h1>{t('nav.threads')}</h1>
    </section>
  );
}
