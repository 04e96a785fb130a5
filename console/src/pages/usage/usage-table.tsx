// The same figures as the chart, as a table: one row per group and a total.
import { t } from '../../i18n/index.js';
import { formatNumber } from '../../ui/format.js';
import { totalsOf, type UsageRow } from './series.js';

export function UsageTable(props: { rows: UsageRow[]; groupLabel: string; caption: string }) {
  const totals = totalsOf(props.rows);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: at 390 px the table scrolls sideways and a keyboard must reach it (axe: scrollable-region-focusable)
    <section class="table-wrap" aria-label={props.caption} tabIndex={0}>
      <table class="usage-table">
        <caption class="muted">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.groupLabel}</th>
            <th scope="col" class="num">
              {t('usage.table.requests')}
            </th>
            <th scope="col" class="num">
              {t('usage.table.promptTokens')}
            </th>
            <th scope="col" class="num">
              {t('usage.table.completionTokens')}
            </th>
            <th scope="col" class="num">
              {t('usage.table.totalTokens')}
            </th>
            <th scope="col" class="num">
              {t('usage.table.errors')}
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ key, label, record }) => (
            <tr key={key}>
              <th scope="row">{label}</th>
              <td class="num">{formatNumber(record.requests)}</td>
              <td class="num">{formatNumber(record.promptTokens)}</td>
              <td class="num">{formatNumber(record.completionTokens)}</td>
              <td class="num">{formatNumber(record.totalTokens)}</td>
              <td class="num">{formatNumber(record.errors)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">{t('usage.table.total')}</th>
            <td class="num">{formatNumber(totals.requests)}</td>
            <td class="num">{formatNumber(totals.promptTokens)}</td>
            <td class="num">{formatNumber(totals.completionTokens)}</td>
            <td class="num">{formatNumber(totals.totalTokens)}</td>
            <td class="num">{formatNumber(totals.errors)}</td>
          </tr>
        </tfoot>
      </table>
    </section>
  );
}
