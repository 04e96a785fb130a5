// The grounding scope: workspaces, each optionally narrowed to some of its collections.
// Sent as the chat route's grounding fields: a workspace with no collection ticked is
// searched whole (workspaceIds); ticked collections are searched alone (collectionIds).
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { Workspace } from '../../../../src/areas/os/workspaces/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { Link } from '../../ui/link.js';
import { useLoad } from '../../ui/use-load.js';

/** Chosen workspace id → its ticked collection ids (empty: the whole workspace). */
export type Scope = Record<string, string[]>;

export function groundingOf(scope: Scope): { workspaceIds?: string[]; collectionIds?: string[] } {
  const workspaceIds = Object.keys(scope).filter((id) => scope[id]!.length === 0);
  const collectionIds = Object.values(scope).flat();
  return {
    ...(workspaceIds.length ? { workspaceIds } : {}),
    ...(collectionIds.length ? { collectionIds } : {}),
  };
}

// The picker shows one page of 100: enough for a playground; the documents pages list the rest.
const PICKER_LIMIT = 100;

export function ScopePicker(props: { value: Scope; onChange: (scope: Scope) => void }) {
  const workspaces = useLoad((signal) => api<{ data: Workspace[] }>('/api/os/workspaces', { query: { limit: PICKER_LIMIT }, signal }), []);
  const chosen = Object.keys(props.value).length;
  const toggle = (id: string, on: boolean) => {
    const next = { ...props.value };
    if (on) next[id] = [];
    else delete next[id];
    props.onChange(next);
  };
  const list = workspaces.data?.data ?? [];
  return (
    <details class="scope">
      <summary>
        {t('playground.groundingSummary', {
          what: chosen ? t('playground.groundingCount', { count: chosen }) : t('playground.groundingNone'),
        })}
      </summary>
      <fieldset class="stack">
        <legend>{t('playground.grounding')}</legend>
        <p class="muted">{t('playground.groundingHelp')}</p>
        {workspaces.error ? (
          <p role="alert" class="form-error">
            {t('playground.workspacesFailed', { detail: problemText(workspaces.error) })}
          </p>
        ) : null}
        {!workspaces.loading && !workspaces.error && list.length === 0 ? (
          <p class="muted">
            {t('playground.noWorkspaces')} <Link href="/workspaces">{t('nav.workspaces')}</Link>
          </p>
        ) : null}
        {list.map((workspace) => (
          <div key={workspace.id} class="stack">
            <label class="inline">
              <input
                type="checkbox"
                checked={workspace.id in props.value}
                onChange={(event) => toggle(workspace.id, event.currentTarget.checked)}
              />
              {workspace.name}
            </label>
            {workspace.id in props.value ? (
              <CollectionChoice
                workspace={workspace}
                value={props.value[workspace.id]!}
                onChange={(ids) => props.onChange({ ...props.value, [workspace.id]: ids })}
              />
            ) : null}
          </div>
        ))}
      </fieldset>
    </details>
  );
}

function CollectionChoice(props: { workspace: Workspace; value: string[]; onChange: (ids: string[]) => void }) {
  const collections = useLoad(
    (signal) =>
      api<{ data: Collection[] }>(`/api/os/workspaces/${encodeURIComponent(props.workspace.id)}/collections`, {
        query: { limit: PICKER_LIMIT },
        signal,
      }),
    [props.workspace.id],
  );
  if (collections.error)
    return (
      <p role="alert" class="form-error">
        {t('playground.collectionsFailed', { detail: problemText(collections.error) })}
      </p>
    );
  const list = collections.data?.data ?? [];
  // Only the default collection: narrowing to it is the same as the whole workspace.
  if (list.length < 2) return null;
  const toggle = (id: string, on: boolean) => props.onChange(on ? [...props.value, id] : props.value.filter((chosen) => chosen !== id));
  return (
    <fieldset class="scope-collections">
      <legend>{t('playground.collectionsOf', { name: props.workspace.name })}</legend>
      {list.map((collection) => (
        <label key={collection.id} class="inline">
          <input
            type="checkbox"
            checked={props.value.includes(collection.id)}
            onChange={(event) => toggle(collection.id, event.currentTarget.checked)}
          />
          {collection.isDefault ? t('playground.defaultCollection', { name: collection.name }) : collection.name}
        </label>
      ))}
    </fieldset>
  );
}
