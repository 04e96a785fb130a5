// Being written: the page's heading only, until its engineer lands it.
import { t } from '../../i18n/index.js';

export function CollectionPage(props: { collectionId: string }) {
  void props;
  return (
    <section class="page">
      <h1>{t('nav.workspaces')}</h1>
    </section>
  );
}
