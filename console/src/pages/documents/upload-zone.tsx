// Drag and drop many files, or pick them with the labelled file input (keyboard users).
// Each file uploads on its own request with its own progress bar and its own answer:
// 202 queued, 200 already there, or why it was refused (415 type, 413 size, 400).
import { useRef, useState } from 'preact/hooks';
import type { Document } from '../../../../src/areas/os/documents/schemas.js';
import { isApiError } from '../../api/client.js';
import { t } from '../../i18n/index.js';
import { problemText } from '../../ui/error-view.js';
import { announce } from '../../ui/notices.js';
import { formatBytes } from './shared.js';
import { uploadFile } from './upload.js';

interface Item {
  key: number;
  name: string;
  size: number;
  loaded: number;
  state: 'waiting' | 'uploading' | 'done' | 'failed';
  message: string;
}

/** Uploads at once: a few in parallel keeps the line busy without flooding the server. */
const PARALLEL = 3;
let nextKey = 1;

function failureText(error: unknown): string {
  if (isApiError(error, 415)) return t('documents.uploadBadType', { detail: problemText(error) });
  if (isApiError(error, 413)) return t('documents.uploadTooLarge', { detail: problemText(error) });
  if (isApiError(error, 0)) return t('documents.uploadConnectionClosed');
  return t('documents.uploadFailed', { detail: problemText(error) });
}

export function UploadZone(props: { collectionId: string; onUploaded: (documents: Document[]) => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const update = (key: number, change: Partial<Item>) =>
    setItems((list) => list.map((item) => (item.key === key ? { ...item, ...change } : item)));

  const start = async (files: File[]) => {
    if (files.length === 0) return;
    const queued = files.map((file) => ({ file, key: nextKey++ }));
    setItems((list) => [
      ...queued.map(({ file, key }) => ({ key, name: file.name, size: file.size, loaded: 0, state: 'waiting' as const, message: '' })),
      ...list,
    ]);
    announce(t('documents.uploadStarted', { count: files.length }));
    let cursor = 0;
    const worker = async () => {
      while (cursor < queued.length) {
        const { file, key } = queued[cursor++]!;
        update(key, { state: 'uploading' });
        try {
          const answer = await uploadFile(props.collectionId, file, (loaded) => update(key, { loaded }));
          const message = answer.status === 202 ? t('documents.uploadAccepted') : t('documents.uploadAlreadyThere');
          update(key, { state: 'done', loaded: file.size, message });
          props.onUploaded(answer.documents);
        } catch (failure) {
          const message = failureText(failure);
          update(key, { state: 'failed', message });
          announce(t('documents.uploadFileFailed', { name: file.name, message }), 'error');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queued.length) }, worker));
  };

  const drop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    void start(Array.from(event.dataTransfer?.files ?? []));
  };
  return (
    <div class="stack">
      <section
        aria-label={t('documents.dropZoneLabel')}
        class={over ? 'drop-zone drop-over' : 'drop-zone'}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
      >
        <p>{t('documents.dropHere')}</p>
        <label class="file-pick">
          {t('documents.chooseFiles')}
          <input
            ref={input}
            type="file"
            multiple
            onChange={(event) => {
              void start(Array.from(event.currentTarget.files ?? []));
              if (input.current) input.current.value = '';
            }}
          />
        </label>
        <p class="muted">{t('documents.uploadHelp')}</p>
      </section>
      {items.length ? (
        <ul class="uploads" aria-label={t('documents.uploadsLabel')}>
          {items.map((item) => (
            <li key={item.key}>
              <label class="upload-line">
                <span>
                  {item.name} <span class="muted">({formatBytes(item.size)})</span>
                </span>
                <progress max={item.size || 1} value={item.state === 'done' ? item.size || 1 : item.loaded} />
              </label>
              <span class={item.state === 'failed' ? 'form-error' : 'muted'}>
                {item.state === 'waiting'
                  ? t('documents.uploadWaiting')
                  : item.state === 'uploading'
                    ? t('documents.uploading')
                    : item.message}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
