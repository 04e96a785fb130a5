// A tenant's usage over a window, summed per API key or user, per model or per UTC
// day, for that tenant's admins and platform admins. The sums come from the llm
// area's records (UsageSource); the keys' names and masked keys from this area's.
import type { Queryable } from '../../../platform/db/database.js';
import { validation } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import { administeredTenant } from '../tenants/service.js';
import { apiKeyRepository } from '../api-keys/repository.js';
import type { UsageGroupRecord, UsageQuery, UsageReport, UsageSource } from './schemas.js';

export interface UsageReportDeps {
  db: Queryable;
  usage: UsageSource;
}

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;
/** A year and a leap day: a year's report by day fits, and no query scans more. */
export const MAX_WINDOW_DAYS = 366;
/** Groups in one answer; more set `truncated` (only key and model can have more: a 366-day window has 366 days). */
export const MAX_GROUPS = 1000;

export async function tenantUsage(deps: UsageReportDeps, principal: Principal, tenantId: string, query: UsageQuery): Promise<UsageReport> {
  await administeredTenant(deps, principal, tenantId);
  const { from, to } = reportWindow(query, new Date());
  const groupBy = query.groupBy ?? 'day';
  const groups = await deps.usage.groups(tenantId, { from, to, groupBy, endpoint: query.endpoint, limit: MAX_GROUPS + 1 });
  const kept = groups.slice(0, MAX_GROUPS);
  const labels = groupBy === 'key' ? await keyLabels(deps.db, tenantId, kept) : new Map<string, { name: string; masked_key: string }>();
  const data = kept.map((g): UsageGroupRecord => {
    const sums = {
      requests: g.requests,
      promptTokens: g.promptTokens,
      completionTokens: g.completionTokens,
      totalTokens: g.promptTokens + g.completionTokens,
      errors: g.errors,
    };
    if (groupBy === 'day') return { day: g.day!, ...sums };
    if (groupBy === 'model') return { model: g.model!, ...sums };
    const key = g.principalKind === 'apiKey' ? labels.get(g.principalId!) : undefined;
    return {
      principalKind: g.principalKind!,
      principalId: g.principalId!,
      ...(g.principalKind === 'apiKey' ? { keyName: key?.name ?? null, maskedKey: key?.masked_key ?? null } : {}),
      ...sums,
    };
  });
  return {
    data,
    from: from.toISOString(),
    to: to.toISOString(),
    groupBy,
    ...(query.endpoint ? { endpoint: query.endpoint } : {}),
    truncated: groups.length > MAX_GROUPS,
  };
}

async function keyLabels(db: Queryable, tenantId: string, groups: Awaited<ReturnType<UsageSource['groups']>>) {
  const ids = groups.filter((g) => g.principalKind === 'apiKey').map((g) => g.principalId!);
  const rows = ids.length > 0 ? await apiKeyRepository.labels(db, tenantId, ids) : [];
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * [from, to): `to` defaults to now and `from` to 30 days before `to`. Each is an
 * ISO 8601 timestamp with its offset (`2026-03-01T00:00:00Z`) or a date, read as
 * midnight UTC. The window must run forwards and span at most 366 days.
 */
export function reportWindow(query: Pick<UsageQuery, 'from' | 'to'>, now: Date): { from: Date; to: Date } {
  const given = {
    from: query.from !== undefined ? instant('from', query.from) : undefined,
    to: query.to !== undefined ? instant('to', query.to) : undefined,
  };
  const to = given.to ?? now;
  const from = given.from ?? new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw validation(query.from !== undefined ? 'from' : 'to', 'must be earlier than to');
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS)
    throw validation(query.from !== undefined ? 'from' : 'to', `the window from from to to may span at most ${MAX_WINDOW_DAYS} days`);
  return { from, to };
}

// Date.parse alone accepts many shapes and rolls 2026-02-30 over into March: the
// shape is checked first, and the calendar date must come back unchanged.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2}))?$/;

function instant(field: 'from' | 'to', value: string): Date {
  const match = TIMESTAMP.exec(value);
  const date = match ? new Date(match[4] === undefined ? `${value}T00:00:00Z` : value) : undefined;
  if (!match || !date || Number.isNaN(date.getTime()) || !sameCalendarDate(match) || Number(match[4] ?? 0) > 23)
    throw validation(field, 'must be an ISO 8601 timestamp with a time zone (2026-03-01T00:00:00Z) or a date (2026-03-01)');
  if (date.getUTCFullYear() < 2000 || date.getUTCFullYear() > 9999) throw validation(field, 'must be a year from 2000 to 9999');
  return date;
}

function sameCalendarDate(match: RegExpExecArray): boolean {
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  return check.getUTCFullYear() === year && check.getUTCMonth() === month - 1 && check.getUTCDate() === day;
}
