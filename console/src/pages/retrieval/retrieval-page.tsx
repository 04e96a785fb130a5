// /retrieval: a query against chosen workspaces and collections, run through
// POST /api/os/search exactly as grounding would, showing the ranked passages with
// their scores and sources. What was typed survives a failed search.
import { useState } from 'preact/hooks';
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { SearchBody } from '../../../../src/areas/os/retrieval/schemas.js';
import type { Mode } from '../../../../src/areas/grounding.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { Results, statusText, type SearchAnswer } from './results.js';
import { type Chosen, ScopePicker, scopeOf } from './scope-picker.js';
import './retrieval.css';
import { useModels } from '../../ui/use-models.js';

const MODES: Mode[] = ['hybrid', 'lexical', 'vector'];

export function RetrievalPage() {
  const [chosen, setChosen] = useState<Chosen>({ workspaces: [], collections: [] });
  const [collections, setCollections] = useState(new Map<string, Collection>());
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState('10');
  const [mode, setMode] = useState<Mode>('hybrid');
  const [rerank, setRerank] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const models = useModels();
  const rerankers = (models.data?.data ?? []).filter((model) => model.kind === 'rerank');

  const remember = (_workspaceId: string, list: Collection[]) =>
    setCollections((known) => {
      const next = new Map(known);
      for (const collection of list) next.set(collection.id, collection);
      return next;
    });

  const submit = async (event: Event) => {
    event.preventDefault();
    const { workspaceIds, collectionIds } = scopeOf(chosen, collections);
    if (workspaceIds.length === 0 && collectionIds.length === 0) {
      setError(t('retrieval.chooseScope'));
      return;
    }
    const body: SearchBody = { query: query.trim(), topK: Number(topK), mode };
    if (workspaceIds.length) body.workspaceIds = workspaceIds;
    if (collectionIds.length) body.collectionIds = collectionIds;
    if (rerank) body.rerankModel = rerank;
    setBusy(true);
    setError('');
    try {
      const found = await api<SearchAnswer>('/api/os/search', { method: 'POST', body });
      setAnswer(found);
      announce(statusText(found));
    } catch (failure) {
      setError(problemText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="page stack">
      <h1>{t('retrieval.title')}</h1>
      <p class="muted">{t('retrieval.intro')}</p>
      <form class="stack" onSubmit={submit}>
        <ScopePicker chosen={chosen} onChange={setChosen} onCollections={remember} />
        <label>
          {t('retrieval.query')}
          <textarea
            name="query"
            required
            maxLength={4000}
            value={query}
            onInput={(event) => setQuery(event.currentTarget.value)}
            onKeyDown={(event) => {
              // Enter runs the search (as in any form); Shift+Enter starts a new line.
              if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
                event.preventDefault();
                event.currentTarget.form?.requestSubmit();
              }
            }}
          />
        </label>
        <div class="row">
          <label>
            {t('retrieval.topK')}
            <input
              type="number"
              name="topK"
              min={1}
              max={50}
              step={1}
              required
              value={topK}
              onInput={(event) => setTopK(event.currentTarget.value)}
            />
          </label>
          <label>
            {t('retrieval.modeLabel')}
            <select name="mode" value={mode} onChange={(event) => setMode(event.currentTarget.value as Mode)}>
              {MODES.map((value) => (
                <option key={value} value={value}>
                  {t(`retrieval.mode.${value}`)}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t('retrieval.rerankLabel')}
            <select name="rerankModel" value={rerank} onChange={(event) => setRerank(event.currentTarget.value)}>
              <option value="">{t('retrieval.rerankNone')}</option>
              {rerankers.map((model) => (
                <option key={model.id} value={model.id}>
                  {model.id}
                </option>
              ))}
            </select>
          </label>
        </div>
        <p role="alert" class="form-error">
          {error}
        </p>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? t('retrieval.searching') : t('retrieval.run')}
          </button>
        </div>
      </form>
      {answer ? <Results answer={answer} collections={collections} /> : null}
    </section>
  );
}
