// Being written: the page's heading only, until its engineer lands it.
import { t } from '../../i18n/index.js';

export function ConversationsPage() {
  return (
    <section class="page">
      <h1>{t('nav.conversations')}</h1>
    </section>
  );
}
