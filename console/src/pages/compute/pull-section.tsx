// "Pull a model": the engine (ollama or local), the model name (or, for local, the file
// name, the download URL and an optional checksum), then the live progress until the
// final success or error frame. Stop aborts the request, which ends the pull.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PullBody, PullEngine } from '../../../../src/areas/llm/pull/schemas.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { formatNumber } from '../../ui/format.js';
import { announce } from '../../ui/notices.js';
import { type PullFrame, streamPull } from './pull-stream.js';

type Outcome = { kind: 'success' | 'error' | 'stopped'; text: string } | null;

export function PullSection(props: { onPulled: () => void }) {
  const [engine, setEngine] = useState<PullEngine>('ollama');
  const [frame, setFrame] = useState<PullFrame | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const controller = useRef<AbortController | null>(null);
  useEffect(() => () => controller.current?.abort(), []);
  const running = controller.current !== null && outcome === null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const model = String(form.get('model')).trim();
    const body: PullBody = { model };
    if (engine === 'local') {
      body.url = String(form.get('url')).trim();
      const sha256 = String(form.get('sha256') ?? '').trim();
      if (sha256) body.sha256 = sha256;
    }
    const abort = new AbortController();
    controller.current = abort;
    setOutcome(null);
    setFrame({ status: t('compute.pull.starting') });
    const finish = (next: NonNullable<Outcome>) => {
      setOutcome(next);
      announce(next.text, next.kind === 'error' ? 'error' : 'info');
    };
    try {
      const last = await streamPull(engine, body, abort.signal, setFrame);
      if (last?.status === 'success') {
        finish({ kind: 'success', text: t('compute.pull.success', { model }) });
        props.onPulled();
      } else if (last?.error) finish({ kind: 'error', text: t('compute.pull.failed', { model, message: last.error.message }) });
      else finish({ kind: 'error', text: t('compute.pull.failed', { model, message: t('compute.pull.ended') }) });
    } catch (failure) {
      if (abort.signal.aborted) finish({ kind: 'stopped', text: t('compute.pull.stopped') });
      else finish({ kind: 'error', text: t('compute.pull.failed', { model, message: problemText(failure) }) });
    }
  };

  return (
    <section class="card stack" aria-labelledby="pull-title">
      <h2 id="pull-title">{t('compute.pull.title')}</h2>
      <p class="muted">{t('compute.pull.help')}</p>
      <form class="stack" onSubmit={submit}>
        <label>
          {t('compute.pull.engine')}
          <select name="engine" value={engine} disabled={running} onChange={(e) => setEngine(e.currentTarget.value as PullEngine)}>
            <option value="ollama">{t('compute.pull.engineOllama')}</option>
            <option value="local">{t('compute.pull.engineLocal')}</option>
          </select>
        </label>
        <label>
          {engine === 'local' ? t('compute.pull.modelLocal') : t('compute.pull.modelOllama')}
          <input
            name="model"
            required
            maxLength={300}
            pattern="\S+"
            spellcheck={false}
            autocomplete="off"
            aria-describedby="pull-model-help"
          />
        </label>
        <p id="pull-model-help" class="muted">
          {engine === 'local' ? t('compute.pull.modelLocalHelp') : t('compute.pull.modelOllamaHelp')}
        </p>
        {engine === 'local' ? (
          <>
            <label>
              {t('compute.pull.url')}
              <input name="url" type="url" required maxLength={4096} spellcheck={false} />
            </label>
            <label>
              {t('compute.pull.sha256')}
              <input name="sha256" pattern="[0-9a-fA-F]{64}" spellcheck={false} autocomplete="off" class="mono" />
            </label>
          </>
        ) : null}
        <div class="row">
          <button type="submit" class="primary" disabled={running}>
            {t('compute.pull.start')}
          </button>
          {running ? (
            <button type="button" class="danger" onClick={() => controller.current?.abort()}>
              {t('compute.pull.stop')}
            </button>
          ) : null}
        </div>
      </form>
      {frame && (running || outcome?.kind === 'success') ? <Progress frame={frame} done={outcome?.kind === 'success'} /> : null}
      {outcome ? (
        <p role={outcome.kind === 'error' ? 'alert' : 'status'} class={outcome.kind === 'error' ? 'form-error' : undefined}>
          {outcome.text}
        </p>
      ) : null}
    </section>
  );
}

function Progress(props: { frame: PullFrame; done: boolean }) {
  const { total, completed } = props.frame;
  const sized = total !== undefined && total > 0 && completed !== undefined;
  const percent = sized ? Math.min(100, Math.floor((completed / total) * 100)) : undefined;
  return (
    <div class="pull-progress stack">
      <label for="pull-progress-bar">{t('compute.pull.progress')}</label>
      {/* Without sizes the bar is indeterminate (no value), as a progress element should be. */}
      {props.done || percent !== undefined ? (
        <progress key="sized" id="pull-progress-bar" max={100} value={props.done ? 100 : percent} aria-describedby="pull-progress-text" />
      ) : (
        <progress key="unsized" id="pull-progress-bar" aria-describedby="pull-progress-text" />
      )}
      <p id="pull-progress-text" class="muted">
        {t('compute.pull.status', { status: props.frame.status })}
        {sized && !props.done
          ? ` · ${t('compute.pull.bytes', { completed: formatNumber(completed), total: formatNumber(total), percent: percent ?? 0 })}`
          : null}
      </p>
    </div>
  );
}
