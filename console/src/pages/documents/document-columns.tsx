// The documents table's columns: name (a link to its chunks), status beside it with
// the failure reason, type, size, chunks, created, and delete for tenant admins.
import type { Document } from '../../../../src/areas/os/documents/schemas.js';
import { t } from '../../i18n/index.js';
import { formatDate, formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import type { Column } from '../../ui/paged-table.js';
import { StatusBadge, formatBytes } from './shared.js';

/** The short name of a media type ("PDF", "CSV"), else the type itself. */
export function typeName(mediaType: string): string {
  const known: Record<string, string> = {
    'application/pdf': 'PDF',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'DOCX',
    'text/csv': 'CSV',
    'application/json': 'JSON',
    'text/html': 'HTML',
    'text/markdown': 'Markdown',
    'text/plain': t('documents.typeText'),
  };
  return known[mediaType.split(';')[0]!.trim()] ?? mediaType;
}

export function documentColumns(onDelete?: (document: Document) => void): Column<Document>[] {
  const columns: Column<Document>[] = [
    {
      header: t('common.name'),
      rowHeader: true,
      cell: (row) => <Link href={`/documents/${encodeURIComponent(row.id)}`}>{row.name}</Link>,
    },
    {
      header: t('common.status'),
      cell: (row) => (
        <>
          <StatusBadge document={row} />
          {row.error ? <span class={row.status === 'failed' ? 'failure-reason' : 'muted'}>{row.error}</span> : null}
        </>
      ),
    },
    { header: t('documents.type'), cell: (row) => typeName(row.mediaType) },
    { header: t('documents.size'), cell: (row) => formatBytes(row.bytes) },
    { header: t('documents.chunks'), cell: (row) => formatNumber(row.chunkCount) },
    { header: t('common.created'), cell: (row) => formatDate(row.createdAt) },
  ];
  if (onDelete)
    columns.push({
      header: t('common.actions'),
      cell: (row) => (
        <button type="button" class="danger" onClick={() => onDelete(row)} aria-label={t('documents.deleteNamed', { name: row.name })}>
          {t('common.delete')}
        </button>
      ),
    });
  return columns;
}
