// Usage (tenant admin): the tenant's requests, tokens and errors over the last 7, 30 or
// 90 days, by day, model or key — a bar chart with the same figures in a table — and
// the tenant's rate limits and quotas.
import { useState } from 'preact/hooks';
import type { UsageGroupBy, UsageReport } from '../../../../src/areas/auth/usage-reports/schemas.js';
import { api, isApiError } from '../../api/client.js';
import { sessionState } from '../../api/session.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { useLoad } from '../../ui/use-load.js';
import { ErrorView } from '../../ui/error-view.js';
import { LoadError } from '../../ui/load-error.js';
import { fromDate, GROUPINGS, METRICS, type Metric, PERIODS, type Period, rowsOf } from './series.js';
import { TenantLimits } from './tenant-limits.js';
import { UsageChart } from './usage-chart.js';
import { UsageTable } from './usage-table.js';
import './usage.css';

export function UsagePage() {
  const session = sessionState();
  const user = session.status === 'signedIn' ? session.user : null;
  const tenantId = user?.tenantId ?? '';
  const [period, setPeriod] = useState<Period>(30);
  const [groupBy, setGroupBy] = useState<UsageGroupBy>('day');
  const [metric, setMetric] = useState<Metric>('requests');
  const report = useLoad(
    (signal) =>
      api<UsageReport>(`/api/auth/tenants/${encodeURIComponent(tenantId)}/usage`, {
        query: { from: fromDate(period), groupBy },
        signal,
      }),
    [tenantId, period, groupBy],
  );
  // Not this tenant's report (403, 404): the whole page says so, as for any id that is not the user's.
  if (isApiError(report.error, 403) || isApiError(report.error, 404)) return <ErrorView error={report.error} />;
  const shown = report.data?.groupBy === groupBy ? report.data : undefined;
  const rows = shown ? rowsOf(shown) : [];
  const groupLabel = t(`usage.groupBy.${groupBy}` as MessageKey);
  const groupWord = t(`usage.by.${groupBy}` as MessageKey);
  const periodLabel = t(`usage.period.${period}` as MessageKey);
  return (
    <section class="page stack">
      <h1>{t('usage.title')}</h1>
      <p class="muted">{t('usage.intro')}</p>
      <form class="row usage-controls" onSubmit={(event) => event.preventDefault()}>
        <label>
          {t('usage.period')}
          <select value={String(period)} onChange={(e) => setPeriod(Number(e.currentTarget.value) as Period)}>
            {PERIODS.map((days) => (
              <option key={days} value={String(days)}>
                {t(`usage.period.${days}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>{t('usage.groupBy')}</legend>
          {GROUPINGS.map((name) => (
            <label class="inline" key={name}>
              <input type="radio" name="groupBy" value={name} checked={groupBy === name} onChange={() => setGroupBy(name)} />
              {t(`usage.groupBy.${name}` as MessageKey)}
            </label>
          ))}
        </fieldset>
        <label>
          {t('usage.metric')}
          <select value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
            {METRICS.map((name) => (
              <option key={name} value={name}>
                {t(`usage.metric.${name}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
      </form>
      {report.error ? <LoadError error={report.error} retry={report.reload} /> : null}
      <div class="usage-layout" aria-busy={report.loading}>
        <section aria-labelledby="usage-chart-title">
          <h2 id="usage-chart-title">{t('usage.chart.title')}</h2>
          {shown ? <UsageChart rows={rows} metric={metric} groupBy={groupWord} capped={groupBy !== 'day'} /> : null}
        </section>
        <section aria-labelledby="usage-table-title">
          <h2 id="usage-table-title">{t('usage.table.title')}</h2>
          {shown ? (
            <>
              <UsageTable
                rows={rows}
                groupLabel={groupLabel}
                caption={t('usage.table.caption', { groupBy: groupWord, period: periodLabel.toLowerCase() })}
              />
              {rows.length === 0 ? <p class="muted">{t('usage.table.empty')}</p> : null}
              {shown.truncated ? <p class="muted">{t('usage.truncated')}</p> : null}
            </>
          ) : null}
        </section>
      </div>
      {user ? <TenantLimits tenantId={tenantId} platformAdmin={user.roles.includes('platform_admin')} /> : null}
    </section>
  );
}
