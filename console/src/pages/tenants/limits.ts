// The tenant limits the form edits, typed by the server's module (type-only: importing
// its values would bring TypeBox into the bundle). `typeof LIMIT_BOUNDS` has literal
// types, so a bound changed there and not here fails the console's typecheck.
import type { LIMIT_BOUNDS, Limits, LimitName } from '../../../../src/platform/rate-limits/limits.js';
import { type MessageKey, t } from '../../i18n/index.js';
import { formatNumber } from '../../ui/format.js';

export const BOUNDS: typeof LIMIT_BOUNDS = {
  requestsPerMinute: 1_000_000,
  tokensPerMinute: 1_000_000_000,
  tokensPerDay: 100_000_000_000,
  tokensPerMonth: 1_000_000_000_000,
  toolCallsPerMinute: 1_000_000,
};
export const LIMIT_NAMES = Object.keys(BOUNDS) as LimitName[];

/** "60 requests/min · 100,000 tokens/day", or "none". */
export function limitsSummary(limits: Limits): string {
  const set = LIMIT_NAMES.filter((name) => limits[name] !== undefined);
  if (set.length === 0) return t('tenants.noLimits');
  return set.map((name) => t(`tenants.limits.short.${name}` as MessageKey, { value: formatNumber(limits[name]!) })).join(' · ');
}
