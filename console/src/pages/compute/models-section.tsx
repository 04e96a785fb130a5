// The models the tenant can call (GET /api/llm/v1/models), with what each is for.
import { t } from '../../i18n/index.js';
import { LoadError } from '../../ui/load-error.js';
import { useModels } from '../../ui/use-models.js';

const kindLabel = (kind: string | undefined) =>
  kind === 'embedding'
    ? t('compute.models.kindEmbedding')
    : kind === 'rerank'
      ? t('compute.models.kindRerank')
      : t('compute.models.kindChat');

export function ModelsSection(props: { version: number }) {
  const models = useModels([props.version]);
  const rows = models.data?.data ?? [];
  return (
    <section class="card" aria-labelledby="models-title">
      <div class="toolbar">
        <h2 id="models-title">{t('compute.models.title')}</h2>
        <button type="button" onClick={models.reload}>
          {t('compute.models.reload')}
        </button>
      </div>
      {models.error ? <LoadError error={models.error} retry={models.reload} /> : null}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: at 390 px the table scrolls sideways and a keyboard must reach it (axe: scrollable-region-focusable) */}
      <section class="table-wrap" aria-labelledby="models-title" tabIndex={0}>
        <table aria-busy={models.loading}>
          <thead>
            <tr>
              <th scope="col">{t('compute.models.id')}</th>
              <th scope="col">{t('compute.models.kind')}</th>
              <th scope="col">{t('compute.models.owner')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((model) => (
              <tr key={model.id}>
                <th scope="row" class="mono">
                  {model.id}
                </th>
                <td>{kindLabel(model.kind)}</td>
                <td>{model.owned_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {!models.loading && !models.error && rows.length === 0 ? <p class="muted">{t('compute.models.none')}</p> : null}
    </section>
  );
}
