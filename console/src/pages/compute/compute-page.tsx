// Compute (tenant admin): the nodes serving the tenant (its own, editable, and the
// shared ones, read-only), the models they offer, and a model pull with live progress.
import { useState } from 'preact/hooks';
import { t } from '../../i18n/index.js';
import { ModelsSection } from './models-section.js';
import { NodesSection } from './nodes-section.js';
import { PullSection } from './pull-section.js';
import './compute.css';

export function ComputePage() {
  // A pull or a node change alters what the models list shows: bumping this refetches it.
  const [modelsVersion, setModelsVersion] = useState(0);
  const changed = () => setModelsVersion((n) => n + 1);
  return (
    <section class="page stack">
      <h1>{t('compute.title')}</h1>
      <p class="muted">{t('compute.intro')}</p>
      <NodesSection onChange={changed} />
      <ModelsSection version={modelsVersion} />
      <PullSection onPulled={changed} />
    </section>
  );
}
