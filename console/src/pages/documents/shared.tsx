// Pieces the documents pages share: who may change things, a document's status badge,
// sizes, and a "delete?" confirmation.
import type { Document } from '../../../../src/areas/os/documents/schemas.js';
import { sessionState } from '../../api/session.js';
import { t } from '../../i18n/index.js';
import { ConfirmDialog } from '../../ui/confirm-dialog.js';
import { formatNumber } from '../../ui/format.js';

/** Changing workspaces, collections and documents is for tenant admins (the API enforces it too). */
export function isTenantAdmin(): boolean {
  const state = sessionState();
  return state.status === 'signedIn' && (state.user.roles.includes('admin') || state.user.roles.includes('platform_admin'));
}

const STATUS_TONE: Record<Document['status'], string> = { queued: 'warn', processing: 'warn', ready: 'ok', failed: 'bad' };

/** The status word beside a document's name; while processing, the stage too. */
export function StatusBadge(props: { document: Pick<Document, 'status' | 'stage'> }) {
  const { status, stage } = props.document;
  const word = t(`documents.status.${status}`);
  return (
    <span class={`badge ${STATUS_TONE[status]}`}>
      {status === 'processing' && stage ? t('documents.statusWithStage', { status: word, stage: t(`documents.stage.${stage}`) }) : word}
    </span>
  );
}

/** Settled documents are ready or failed; anything else is still moving. */
export const isSettled = (document: Pick<Document, 'status'>): boolean => document.status === 'ready' || document.status === 'failed';

const UNITS = ['B', 'KB', 'MB', 'GB'] as const;
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? formatNumber(value) : value.toFixed(1)} ${UNITS[unit]}`;
}

/** "Delete {name}?": the action runs on confirm (and closes the dialog); a failure stays in the dialog. */
export function ConfirmDelete(props: { name: string | null; onCancel: () => void; onDelete: () => Promise<void> }) {
  return (
    <ConfirmDialog
      title={t('documents.confirmDeleteTitle')}
      open={props.name !== null}
      message={<p>{t('common.confirmDelete', { name: props.name ?? '' })}</p>}
      confirmLabel={t('common.delete')}
      onConfirm={props.onDelete}
      onClose={props.onCancel}
    />
  );
}
