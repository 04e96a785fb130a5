// The tenant's rate limits and quotas, read-only here (a platform admin sets them on
// the Tenants page; a tenant admin who sent `limits` would get 403).
import type { Tenant } from '../../../../src/areas/auth/tenants/schemas.js';
import type { LimitName } from '../../../../src/platform/rate-limits/limits.js';
import { api } from '../../api/client.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { formatNumber } from '../../ui/format.js';
import { Link } from '../../ui/link.js';
import { useLoad } from '../../ui/use-load.js';
import { LoadError } from '../../ui/load-error.js';

// Type-only from the server (its module would bring TypeBox into the bundle); the Record
// makes the compiler name any limit added there and missing here.
const SHOWN: Record<LimitName, true> = {
  requestsPerMinute: true,
  tokensPerMinute: true,
  tokensPerDay: true,
  tokensPerMonth: true,
  toolCallsPerMinute: true,
};
export const LIMIT_NAMES = Object.keys(SHOWN) as LimitName[];

export function TenantLimits(props: { tenantId: string; platformAdmin: boolean }) {
  const tenant = useLoad((signal) => api<Tenant>(`/api/auth/tenants/${encodeURIComponent(props.tenantId)}`, { signal }), [props.tenantId]);
  const limits = tenant.data?.limits;
  return (
    <section class="card" aria-labelledby="limits-title" aria-busy={tenant.loading}>
      <h2 id="limits-title">{t('usage.limits.title')}</h2>
      <p class="muted">{t('usage.limits.help')}</p>
      {tenant.error ? <LoadError error={tenant.error} retry={tenant.reload} /> : null}
      {limits ? (
        <>
          {Object.keys(limits).length === 0 ? <p>{t('usage.limits.noneSet')}</p> : null}
          <dl class="limits-list">
            {LIMIT_NAMES.map((name) => (
              <div key={name}>
                <dt>{t(`usage.limits.${name}` as MessageKey)}</dt>
                <dd>{limits[name] !== undefined ? formatNumber(limits[name]) : <span class="muted">{t('usage.limits.none')}</span>}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
      {props.platformAdmin ? (
        <p>
          <Link href="/tenants">{t('usage.limits.edit')}</Link>
        </p>
      ) : null}
    </section>
  );
}
