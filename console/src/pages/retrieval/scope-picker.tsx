// Where the retrieval test looks: the tenant's workspaces as checkboxes, and under each
// chosen workspace its collections. A workspace with none of its collections ticked is
// searched whole; ticking collections narrows it to those (see scopeOf).
import { useEffect } from 'preact/hooks';
import type { Collection } from '../../../../src/areas/os/collections/schemas.js';
import type { Workspace } from '../../../../src/areas/os/workspaces/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { ErrorView } from '../../ui/error-view.js';
import { useLoad } from '../../ui/use-load.js';

export interface Chosen {
  workspaces: string[];
  collections: string[];
}

/** The search's fields: whole workspaces where no collection of theirs is ticked, else the ticked collections. */
export function scopeOf(chosen: Chosen, collections: Map<string, Collection>): { workspaceIds: string[]; collectionIds: string[] } {
  const collectionIds = chosen.collections.filter((id) => {
    const workspaceId = collections.get(id)?.workspaceId;
    return workspaceId !== undefined && chosen.workspaces.includes(workspaceId);
  });
  const narrowed = new Set(collectionIds.map((id) => collections.get(id)!.workspaceId));
  return { workspaceIds: chosen.workspaces.filter((id) => !narrowed.has(id)), collectionIds };
}

const toggle = (list: string[], id: string, on: boolean) => (on ? [...list, id] : list.filter((x) => x !== id));

export function ScopePicker(props: {
  chosen: Chosen;
  onChange: (chosen: Chosen) => void;
  /** Each chosen workspace's collections as they load (for names in the results, and scopeOf). */
  onCollections: (workspaceId: string, collections: Collection[]) => void;
}) {
  const workspaces = useLoad((signal) => api<{ data: Workspace[] }>('/api/os/workspaces', { signal }), []);
  const { chosen } = props;
  return (
    <fieldset class="stack">
      <legend>{t('retrieval.scope')}</legend>
      <p class="muted">{t('retrieval.scopeHelp')}</p>
      {workspaces.error ? <ErrorView error={workspaces.error} retry={workspaces.reload} /> : null}
      {workspaces.data && workspaces.data.data.length === 0 ? <p class="muted">{t('retrieval.noWorkspaces')}</p> : null}
      <ul class="scope-list">
        {(workspaces.data?.data ?? []).map((workspace) => {
          const on = chosen.workspaces.includes(workspace.id);
          return (
            <li key={workspace.id}>
              <label class="inline">
                <input
                  type="checkbox"
                  checked={on}
                  onChange={(event) =>
                    props.onChange({ ...chosen, workspaces: toggle(chosen.workspaces, workspace.id, event.currentTarget.checked) })
                  }
                />
                {t('retrieval.workspaceOption', { name: workspace.name })}
              </label>
              {on ? (
                <Collections workspace={workspace} chosen={chosen} onChange={props.onChange} onCollections={props.onCollections} />
              ) : null}
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

function Collections(props: {
  workspace: Workspace;
  chosen: Chosen;
  onChange: (chosen: Chosen) => void;
  onCollections: (workspaceId: string, collections: Collection[]) => void;
}) {
  const id = props.workspace.id;
  const list = useLoad(
    (signal) => api<{ data: Collection[] }>(`/api/os/workspaces/${encodeURIComponent(id)}/collections`, { signal }),
    [id],
  );
  useEffect(() => {
    if (list.data) props.onCollections(id, list.data.data);
  }, [list.data]);
  if (list.error) return <ErrorView error={list.error} retry={list.reload} />;
  const { chosen } = props;
  return (
    <ul class="scope-list nested" aria-label={t('retrieval.collectionsOf', { name: props.workspace.name })}>
      {(list.data?.data ?? []).map((collection) => (
        <li key={collection.id}>
          <label class="inline">
            <input
              type="checkbox"
              checked={chosen.collections.includes(collection.id)}
              onChange={(event) =>
                props.onChange({ ...chosen, collections: toggle(chosen.collections, collection.id, event.currentTarget.checked) })
              }
            />
            {t('retrieval.collectionOption', { name: collection.name, count: collection.documentCount })}
          </label>
        </li>
      ))}
    </ul>
  );
}
