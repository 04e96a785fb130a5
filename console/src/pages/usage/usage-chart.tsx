// The chart: plain SVG bars, one per row (no chart library). The SVG is one image with a
// summary for screen readers; the figures themselves are in the table beside it.
// Colours come from classes in usage.css (CSS variables), never inline styles.
import { type MessageKey, t } from '../../i18n/index.js';
import { formatNumber } from '../../ui/format.js';
import type { Metric, UsageRow } from './series.js';

const WIDTH = 600;
const HEIGHT = 220;
/** Model and key groups come largest first: past this many bars they would be slivers. */
const MAX_BARS = 40;

export function UsageChart(props: { rows: UsageRow[]; metric: Metric; groupBy: string; capped: boolean }) {
  const rows = props.capped ? props.rows.slice(0, MAX_BARS) : props.rows;
  const values = rows.map((row) => row.record[props.metric]);
  const max = Math.max(0, ...values);
  const total = values.reduce((a, b) => a + b, 0);
  const metric = t(`usage.metric.${props.metric}` as MessageKey);
  const top = rows[values.indexOf(max)];
  const summary =
    max === 0 || !top
      ? t('usage.chart.summaryEmpty', { metric, groupBy: props.groupBy })
      : t('usage.chart.summary', {
          metric,
          groupBy: props.groupBy,
          count: rows.length,
          total: formatNumber(total),
          max: formatNumber(max),
          label: top.label,
        });
  const slot = rows.length > 0 ? WIDTH / rows.length : WIDTH;
  const gap = Math.min(4, slot * 0.2);
  return (
    <figure class="usage-chart">
      <svg role="img" aria-label={summary} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" class="usage-svg">
        {rows.map((row, i) => {
          const value = values[i] ?? 0;
          const height = max > 0 ? (value / max) * (HEIGHT - 4) : 0;
          return (
            <rect
              key={row.key}
              class={`usage-bar usage-bar-${props.metric}`}
              x={i * slot + gap / 2}
              y={HEIGHT - height}
              width={Math.max(1, slot - gap)}
              height={height}
            />
          );
        })}
        <line class="usage-axis" x1={0} y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} />
      </svg>
      <figcaption class="muted usage-caption">
        <span>{t('usage.chart.scale', { max: formatNumber(max) })}</span>
        {rows.length > 1 ? <span>{t('usage.chart.range', { first: rows[0]!.label, last: rows[rows.length - 1]!.label })}</span> : null}
        {rows.length < props.rows.length ? <span>{t('usage.chart.largest', { count: rows.length })}</span> : null}
      </figcaption>
    </figure>
  );
}
