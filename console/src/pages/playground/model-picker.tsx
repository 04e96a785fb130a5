// The model picker: the tenant's chat models as GET /api/llm/v1/models lists them,
// `auto` first; embedders and rerankers (`kind`) are not chat models and are left out.
// `auto` is always offered, so a failed listing still leaves a usable choice.
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { useModels } from '../../ui/use-models.js';

export function ModelPicker(props: { value: string; onChange: (model: string) => void }) {
  const models = useModels();
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
