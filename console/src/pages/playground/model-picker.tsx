// The model picker: the tenant's chat models as GET /api/llm/v1/models lists them,
// `auto` first; embedders and rerankers (`kind`) are not chat models and are left out.
// `auto` is always offered, so a failed listing still leaves a usable choice.
import type { ModelList } from '../../../../src/areas/llm/models/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { useLoad } from '../../ui/use-load.js';

export function ModelPicker(props: { value: string; onChange: (model: string) => void }) {
  const models = useLoad((signal) => api<ModelList>('/api/llm/v1/models', { signal }), []);
  const chat = (models.data?.data ?? []).filter((model) => !model.kind && model.id !== 'auto').map((model) => model.id);
  const ids = ['auto', ...chat];
  if (!ids.includes(props.value)) ids.push(props.value);
  return (
    <div class="stack">
      <label>
        {t('playground.model')}
        <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
          {ids.map((id) => (
            <option key={id} value={id}>
              {id === 'auto' ? t('playground.modelAuto') : id}
            </option>
          ))}
        </select>
      </label>
      {models.error ? (
        <p role="alert" class="form-error">
          {t('playground.modelsFailed', { detail: problemText(models.error) })}
        </p>
      ) : null}
    </div>
  );
}
