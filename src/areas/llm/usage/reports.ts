// What the llm area offers of its usage records to the tenants' usage report
// (auth/usage-reports): sums per group over a window (the contract: areas/usage.ts).
// The composition root hands it over, so the auth area imports nothing of llm.
import type { Queryable } from '../../../platform/db/database.js';
import type { UsageSource } from '../../usage.js';
import { usageRepository } from './repository.js';

/**
 * Reads through the recorder: what this process has queued is written first, so a
 * report counts every request this replica has answered. Other replicas' queues reach
 * the table on their next flush (GATEWAY_USAGE_FLUSH_SECONDS).
 */
export function usageReports(deps: { db: Queryable; recorder: { flush(): Promise<void> } }): UsageSource {
  return {
    async groups(tenantId, query) {
      await deps.recorder.flush();
      const rows = await usageRepository.report(deps.db, tenantId, query);
      return rows.map((row) => ({
        principalKind: row.principal_kind,
        principalId: row.principal_id,
        model: row.model,
        day: row.day,
        requests: row.requests,
        promptTokens: row.prompt_tokens,
        completionTokens: row.completion_tokens,
        errors: row.errors,
      }));
    },
  };
}
