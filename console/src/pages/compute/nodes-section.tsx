// The compute nodes serving the tenant: own nodes can be edited and deleted, shared
// ones (from the configuration or a platform admin) are shown read-only, without URL.
import { useState } from 'preact/hooks';
import type { ComputeNode } from '../../../../src/areas/llm/nodes/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { formatDate } from '../../ui/format.js';
import { announce } from '../../ui/notices.js';
import { useLoad } from '../../ui/use-load.js';
import { LoadError } from '../../ui/load-error.js';
import { HealthBadge } from './health-badge.js';
import { NodeDialog } from './node-dialog.js';

type Editing = { mode: 'add' } | { mode: 'edit'; node: ComputeNode } | null;

export function NodesSection(props: { onChange: () => void }) {
  const nodes = useLoad((signal) => api<{ data: ComputeNode[] }>('/api/llm/v1/nodes', { signal }), []);
  const [editing, setEditing] = useState<Editing>(null);
  const saved = () => {
    setEditing(null);
    nodes.reload();
    props.onChange();
  };
  const remove = async (node: ComputeNode) => {
    if (!confirm(t('common.confirmDelete', { name: node.name }))) return;
    try {
      await api(`/api/llm/v1/nodes/${encodeURIComponent(node.id)}`, { method: 'DELETE' });
      announce(t('compute.nodes.deleted', { name: node.name }));
      saved();
    } catch (error) {
      announce(problemText(error), 'error');
    }
  };
  const rows = nodes.data?.data ?? [];
  return (
    <section class="card" aria-labelledby="nodes-title">
      <div class="toolbar">
        <h2 id="nodes-title">{t('compute.nodes.title')}</h2>
        <button type="button" class="primary" onClick={() => setEditing({ mode: 'add' })}>
          {t('compute.nodes.add')}
        </button>
      </div>
      {nodes.error ? <LoadError error={nodes.error} retry={nodes.reload} /> : null}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: at 390 px the table scrolls sideways and a keyboard must reach it (axe: scrollable-region-focusable) */}
      <section class="table-wrap" aria-labelledby="nodes-title" tabIndex={0}>
        <table class="nodes-table" aria-busy={nodes.loading}>
          <thead>
            <tr>
              <th scope="col">{t('compute.nodes.name')}</th>
              <th scope="col">{t('compute.nodes.engine')}</th>
              <th scope="col">{t('compute.nodes.url')}</th>
              <th scope="col">{t('compute.nodes.owner')}</th>
              <th scope="col">{t('compute.nodes.health')}</th>
              <th scope="col">{t('compute.nodes.models')}</th>
              <th scope="col">{t('compute.nodes.checkedAt')}</th>
              <th scope="col">{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((node) => (
              <NodeRow key={node.id} node={node} onEdit={() => setEditing({ mode: 'edit', node })} onDelete={() => void remove(node)} />
            ))}
          </tbody>
        </table>
      </section>
      {!nodes.loading && !nodes.error && rows.length === 0 ? <p class="muted">{t('compute.nodes.none')}</p> : null}
      <NodeDialog editing={editing} onClose={() => setEditing(null)} onSaved={saved} />
    </section>
  );
}

function NodeRow(props: { node: ComputeNode; onEdit: () => void; onDelete: () => void }) {
  const { node } = props;
  const { health } = node;
  return (
    <tr>
      <th scope="row">
        {node.name}
        {node.enabled ? null : <span class="muted"> ({t('compute.nodes.disabled')})</span>}
      </th>
      <td>{node.engine}</td>
      <td class="mono">{node.url ?? <span class="muted">{t('compute.nodes.hidden')}</span>}</td>
      <td>{node.editable ? t('compute.nodes.own') : <span class="badge">{t('compute.nodes.shared')}</span>}</td>
      <td>
        <HealthBadge status={health.status} />
        {health.lastError ? <p class="node-error">{t('compute.nodes.lastError', { error: health.lastError })}</p> : null}
      </td>
      <td class="node-models mono">{health.models.length > 0 ? health.models.join(', ') : t('compute.nodes.noModels')}</td>
      <td>{formatDate(health.checkedAt)}</td>
      <td>
        {node.editable ? (
          <div class="row">
            <button type="button" onClick={props.onEdit} aria-label={t('compute.nodes.edit', { name: node.name })}>
              {t('compute.nodes.editShort')}
            </button>
            <button type="button" class="danger" onClick={props.onDelete} aria-label={t('compute.nodes.delete', { name: node.name })}>
              {t('common.delete')}
            </button>
          </div>
        ) : null}
      </td>
    </tr>
  );
}
