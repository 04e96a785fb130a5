// Add a node, or edit one of the tenant's own: name, engine, URL, API key (write-only:
// the record only says whether one is set) and whether the router may use it.
import { useState } from 'preact/hooks';
import type { ComputeNode, NewNode, NodePatch, RemoteEngine } from '../../../../src/areas/llm/nodes/schemas.js';
import { api } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { Dialog } from '../../ui/dialog.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';

type Editing = { mode: 'add' } | { mode: 'edit'; node: ComputeNode } | null;

export function NodeDialog(props: { editing: Editing; onClose: () => void; onSaved: () => void }) {
  const { editing } = props;
  const title = editing?.mode === 'edit' ? t('compute.form.editTitle', { name: editing.node.name }) : t('compute.form.addTitle');
  return (
    <Dialog title={title} open={editing !== null} onClose={props.onClose}>
      {editing ? (
        <NodeForm
          key={editing.mode === 'edit' ? editing.node.id : 'new'}
          node={editing.mode === 'edit' ? editing.node : undefined}
          onSaved={props.onSaved}
        />
      ) : null}
    </Dialog>
  );
}

function NodeForm(props: { node: ComputeNode | undefined; onSaved: () => void }) {
  const { node } = props;
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name')).trim();
    const engine = String(form.get('engine')) as RemoteEngine;
    const url = String(form.get('url')).trim();
    const apiKey = String(form.get('apiKey') ?? '');
    const enabled = form.get('enabled') === 'on';
    setBusy(true);
    setError('');
    try {
      if (node) {
        const patch: NodePatch = { name, engine, url, enabled };
        if (form.get('removeApiKey') === 'on') patch.apiKey = null;
        else if (apiKey) patch.apiKey = apiKey;
        await api<ComputeNode>(`/api/llm/v1/nodes/${encodeURIComponent(node.id)}`, { method: 'PATCH', body: patch });
        announce(t('compute.nodes.saved', { name }));
      } else {
        const body: NewNode = { name, engine, url, enabled, ...(apiKey ? { apiKey } : {}) };
        await api<ComputeNode>('/api/llm/v1/nodes', { method: 'POST', body });
        announce(t('compute.nodes.created', { name }));
      }
      props.onSaved();
    } catch (failure) {
      setError(problemText(failure));
      setBusy(false);
    }
  };
  const engine = node?.engine === 'openai' || node?.engine === 'ollama' ? node.engine : 'ollama';
  return (
    <form class="stack" onSubmit={submit}>
      <label>
        {t('compute.form.name')}
        <input name="name" required maxLength={200} defaultValue={node?.name ?? ''} autocomplete="off" />
      </label>
      <label>
        {t('compute.form.engine')}
        <select name="engine" defaultValue={engine}>
          <option value="ollama">{t('compute.form.engineOllama')}</option>
          <option value="openai">{t('compute.form.engineOpenai')}</option>
        </select>
      </label>
      <label>
        {t('compute.form.url')}
        <input
          name="url"
          type="url"
          required
          maxLength={2000}
          defaultValue={node?.url ?? ''}
          aria-describedby="node-url-help"
          spellcheck={false}
        />
      </label>
      <p id="node-url-help" class="muted">
        {t('compute.form.urlHelp')}
      </p>
      <label>
        {node?.hasApiKey ? t('compute.form.apiKeyKeep') : t('compute.form.apiKey')}
        <input name="apiKey" type="password" maxLength={4096} autocomplete="off" />
      </label>
      {node?.hasApiKey ? (
        <label class="inline">
          <input type="checkbox" name="removeApiKey" />
          {t('compute.form.removeApiKey')}
        </label>
      ) : null}
      <label class="inline">
        <input type="checkbox" name="enabled" defaultChecked={node?.enabled ?? true} />
        {t('compute.form.enabled')}
      </label>
      <p role="alert" class="form-error">
        {error}
      </p>
      <button type="submit" class="primary" disabled={busy}>
        {node ? t('compute.form.submitSave') : t('compute.form.submitAdd')}
      </button>
    </form>
  );
}
