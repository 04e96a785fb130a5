// The report as rows the chart and the table share: one per group, labelled, and for
// `day` one per UTC day of the window (a day without requests is a zero, not a gap).
import type { UsageGroupBy, UsageGroupRecord, UsageReport } from '../../../../src/areas/auth/usage-reports/schemas.js';
import { t } from '../../i18n/index.js';

export interface UsageRow {
  key: string;
  label: string;
  record: UsageGroupRecord;
}

export type Metric = 'requests' | 'totalTokens' | 'errors';
export const METRICS: Metric[] = ['requests', 'totalTokens', 'errors'];
export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];
export const GROUPINGS: UsageGroupBy[] = ['day', 'model', 'key'];

const DAY_MS = 86_400_000;
const zero = { requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, errors: 0 };

/** The window's first UTC day: today and the days before it, `days` in all. */
export function fromDate(days: Period, now = Date.now()): string {
  return new Date(now - (days - 1) * DAY_MS).toISOString().slice(0, 10);
}

export function rowsOf(report: UsageReport): UsageRow[] {
  if (report.groupBy !== 'day') return report.data.map((record, i) => ({ key: String(i), label: labelOf(record), record }));
  const byDay = new Map(report.data.map((record) => [record.day, record]));
  const rows: UsageRow[] = [];
  const end = Date.parse(report.to);
  for (let day = Date.parse(report.from.slice(0, 10)); day < end; day += DAY_MS) {
    const name = new Date(day).toISOString().slice(0, 10);
    rows.push({ key: name, label: name, record: byDay.get(name) ?? { day: name, ...zero } });
  }
  return rows;
}

function labelOf(record: UsageGroupRecord): string {
  if (record.principalKind === 'user') return t('usage.key.user', { id: record.principalId ?? '' });
  if (record.principalKind === 'apiKey') {
    return record.keyName
      ? t('usage.key.named', { name: record.keyName, masked: record.maskedKey ?? '' })
      : t('usage.key.deleted', { id: record.principalId ?? '' });
  }
  return record.model ?? t('usage.model.none');
}

export function totalsOf(rows: UsageRow[]): Omit<UsageGroupRecord, 'day' | 'model'> {
  const sum = { ...zero };
  for (const { record } of rows) for (const name of Object.keys(zero) as (keyof typeof zero)[]) sum[name] += record[name];
  return sum;
}
