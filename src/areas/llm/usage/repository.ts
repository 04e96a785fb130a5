// Reads of usage_records for reports: sums per principal, model or UTC day over a
// time window of one tenant. The recorder (recorder.ts) is the only writer.
import type { Queryable } from '../../../platform/db/database.js';
import type { UsageGroupBy, UsageReportQuery } from '../../usage.js';

export interface UsageGroupRow {
  principal_kind: 'user' | 'apiKey' | null;
  principal_id: string | null;
  model: string | null;
  /** `YYYY-MM-DD` (UTC). */
  day: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  errors: number;
}

// The group's columns, and its order: days ascending, anything else by total tokens
// (then requests) descending, with the group itself last so that equal totals come in
// a stable order. `created_at AT TIME ZONE 'UTC'` is the UTC wall time whatever the
// session's time zone, so a day is a UTC day on PGlite and on PostgreSQL alike.
const DAY = `to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
const GROUPS: Record<UsageGroupBy, { select: string; groupBy: string; orderBy: string }> = {
  key: {
    select: 'principal_kind, principal_id, NULL AS model, NULL AS day',
    groupBy: 'principal_kind, principal_id',
    orderBy: '(sum(prompt_tokens) + sum(completion_tokens)) DESC, count(*) DESC, principal_kind, principal_id',
  },
  model: {
    select: 'NULL AS principal_kind, NULL AS principal_id, model, NULL AS day',
    groupBy: 'model',
    orderBy: '(sum(prompt_tokens) + sum(completion_tokens)) DESC, count(*) DESC, model',
  },
  day: {
    select: `NULL AS principal_kind, NULL AS principal_id, NULL AS model, ${DAY} AS day`,
    groupBy: DAY,
    orderBy: DAY,
  },
};

export const usageRepository = {
  /** Tokens (prompt and completion) of a tenant, or of one of its API keys, in [from, to): seeds a rate-limit budget. */
  async tokensUsed(q: Queryable, tenantId: string, keyId: string | null, from: Date, to: Date): Promise<number> {
    const [row] = await q.query<{ tokens: number }>(
      `SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS tokens FROM usage_records
        WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3
          AND ($4::text IS NULL OR (principal_kind = 'apiKey' AND principal_id = $4))`,
      [tenantId, from, to, keyId],
    );
    return Number(row?.tokens ?? 0);
  },

  /**
   * Sums per group of the tenant's requests in [from, to), at most `limit` groups.
   * Sums go out as float8 (exact up to 2^53) rather than bigint, which the drivers
   * hand back as text. Errors are requests whose status is not `ok`.
   */
  report(q: Queryable, tenantId: string, query: UsageReportQuery): Promise<UsageGroupRow[]> {
    const group = GROUPS[query.groupBy];
    return q.query<UsageGroupRow>(
      `SELECT ${group.select},
              count(*)::float8 AS requests,
              sum(prompt_tokens)::float8 AS prompt_tokens,
              sum(completion_tokens)::float8 AS completion_tokens,
              count(*) FILTER (WHERE status <> 'ok')::float8 AS errors
         FROM usage_records
        WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3
          AND ($4::text IS NULL OR endpoint = $4::text)
        GROUP BY ${group.groupBy}
        ORDER BY ${group.orderBy}
        LIMIT $5`,
      [tenantId, query.from.toISOString(), query.to.toISOString(), query.endpoint ?? null, query.limit],
    );
  },
};
