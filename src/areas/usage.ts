// The contract between the llm area, which records usage, and the auth area's tenant
// usage report: what may be asked (a window, a grouping) and what comes back (sums per
// group). The composition root hands the llm area's reader to the report, typed by this file.

export type UsageGroupBy = 'key' | 'model' | 'day';

export interface UsageReportQuery {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  groupBy: UsageGroupBy;
  /** Only requests to this endpoint (`chat/completions`, `embeddings`…). */
  endpoint?: string | undefined;
  /** The most groups returned. */
  limit: number;
}

/** One group's sums; the fields of the other groupings are null. */
export interface UsageGroup {
  principalKind: 'user' | 'apiKey' | null;
  principalId: string | null;
  model: string | null;
  day: string | null;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  errors: number;
}

/** Sums per group, largest first (by day: in day order). */
export interface UsageSource {
  groups(tenantId: string, query: UsageReportQuery): Promise<UsageGroup[]>;
}
