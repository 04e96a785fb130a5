// Being written: the page's heading only, until its engineer lands it.
import { t } from '../../i18n/index.js';

export function PlaygroundPage(props: { conversationId?: string | undefined }) {
  void props;
  return (
    <section class="page">
      <h1>{t('nav.playground')}</h1>
    </section>
  );
}
