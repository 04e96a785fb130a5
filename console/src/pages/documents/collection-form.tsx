// The create / edit dialog of a collection: name, description, text-search language,
// embedder and reranker. On edit only the changed fields are sent: changing the
// embedder re-embeds every chunk, and the language can change only while it is empty.
import { useState } from 'preact/hooks';
import type { Collection, CollectionPatch, NewCollection } from '../../../../src/areas/os/collections/schemas.js';
import type { Model } from '../../../../src/areas/llm/models/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { FormFooter } from '../../ui/form-footer.js';
import { useModels } from '../../ui/use-models.js';

/** Select values that are not model ids. */
const DEFAULT = '';
const NONE = '\u0000none';

export function CollectionForm(props: {
  open: boolean;
  workspaceId: string;
  collection?: Collection | undefined;
  onClose: () => void;
  onSaved: (collection: Collection) => void;
}) {
  return (
    <Dialog
      title={props.collection ? t('documents.collectionEditTitle') : t('documents.collectionCreateTitle')}
      open={props.open}
      onClose={props.onClose}
    >
      <Fields key={props.collection?.id ?? 'new'} {...props} />
    </Dialog>
  );
}

function Fields(props: {
  workspaceId: string;
  collection?: Collection | undefined;
  onClose: () => void;
  onSaved: (c: Collection) => void;
}) {
  const current = props.collection;
  const models = useModels();
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const all = (models.data?.data ?? []).filter((model) => model.id !== 'auto');
  const rerankers = all.filter((model) => model.kind === 'rerank');
  const embedders = all.filter((model) => model.kind === 'embedding');
  const others = all.filter((model) => model.kind === undefined);
  const currentEmbedder = current ? (current.embedding?.model ?? NONE) : DEFAULT;
  const currentReranker = current?.rerankModel ?? NONE;
  const withCurrent = (list: Model[], id: string) =>
    id === NONE || id === DEFAULT || list.some((m) => m.id === id) ? list : [{ id } as Model, ...list];

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description')).trim();
    const language = String(form.get('language')).trim();
    const embedder = String(form.get('embedder'));
    const reranker = String(form.get('reranker'));
    const asModel = (value: string) => (value === NONE ? null : value);
    setBusy(true);
    setError('');
    try {
      let saved: Collection;
      if (current) {
        const patch: CollectionPatch = {};
        if (name !== current.name) patch.name = name;
        if ((description || null) !== current.description) patch.description = description || null;
        if (language && language !== current.language) patch.language = language;
        if (embedder !== currentEmbedder) patch.embeddingModel = asModel(embedder);
        if (reranker !== currentReranker) patch.rerankModel = asModel(reranker);
        saved = await api<Collection>(`/api/os/collections/${encodeURIComponent(current.id)}`, { method: 'PATCH', body: patch });
      } else {
        const body: NewCollection = { name };
        if (description) body.description = description;
        if (language) body.language = language;
        if (embedder !== DEFAULT) body.embeddingModel = asModel(embedder);
        if (reranker !== NONE) body.rerankModel = reranker;
        saved = await api<Collection>(`/api/os/workspaces/${encodeURIComponent(props.workspaceId)}/collections`, { method: 'POST', body });
      }
      props.onSaved(saved);
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  const option = (model: Model) => (
    <option key={model.id} value={model.id}>
      {model.id}
    </option>
  );
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('documents.collectionName')}
        <input name="name" required maxLength={200} defaultValue={current?.name ?? ''} />
      </label>
      <label>
        {t('documents.description')}
        <textarea name="description" maxLength={2000} defaultValue={current?.description ?? ''} />
      </label>
      <label>
        {t('documents.language')}
        <input
          name="language"
          maxLength={63}
          pattern="[A-Za-z0-9_]+"
          placeholder={t('documents.languagePlaceholder')}
          defaultValue={current?.language ?? ''}
        />
        <span class="muted">{t('documents.languageHelp')}</span>
      </label>
      <label>
        {t('documents.embedder')}
        <select name="embedder" defaultValue={currentEmbedder} key={`e${all.length}`}>
          {current ? null : <option value={DEFAULT}>{t('documents.embedderDefault')}</option>}
          <option value={NONE}>{t('documents.embedderNone')}</option>
          {withCurrent(
            embedders,
            current && currentEmbedder !== NONE && !others.some((m) => m.id === currentEmbedder) ? currentEmbedder : NONE,
          ).map(option)}
          {others.length ? <optgroup label={t('documents.otherModels')}>{others.map(option)}</optgroup> : null}
        </select>
        {current ? <span class="muted">{t('documents.embedderHelp')}</span> : null}
      </label>
      <label>
        {t('documents.reranker')}
        <select name="reranker" defaultValue={currentReranker} key={`r${all.length}`}>
          <option value={NONE}>{t('documents.rerankerNone')}</option>
          {withCurrent(rerankers, currentReranker).map(option)}
        </select>
      </label>
      {models.error ? <p class="muted">{t('documents.modelsUnavailable')}</p> : null}
      <FormFooter
        error={error}
        submitLabel={current ? t('common.save') : t('documents.collectionCreate')}
        disabled={busy}
        onCancel={props.onClose}
      />
    </form>
  );
}
