// Each ended MCP tool call, as its audit record describes it, also goes to /metrics
// (counts by tenant, server, tool and status; a duration histogram) and, when traces
// are on, into the request's trace as a span of its own. Hooked at the audit because
// every call path writes exactly one record per call (the endpoint's tools/call, its
// refused arguments, and any other path that runs tools and audits them), with
// server, tool, status and duration already decided. Names, statuses and durations
// only: arguments and results never reach a label, an attribute or a log.
import type { LlmObserver } from '../../observer.js';
import { workSpans } from '../../../../platform/tracing.js';
import type { McpCallAudit, McpCallEntry } from './audit.js';

export class ObservedMcpCallAudit implements McpCallAudit {
  /** /metrics, once the composition root turns it on (LlmServices.observe). */
  observer: Pick<LlmObserver, 'mcpCall'> | undefined = undefined;

  constructor(private readonly audit: McpCallAudit) {}

  async record(entry: McpCallEntry): Promise<void> {
    const named = namedTool(entry);
    this.observer?.mcpCall(entry.principal.tenantId, named?.server ?? null, named?.tool ?? '', entry.status, entry.durationMs);
    workSpans()?.(spanOf(entry));
    await this.audit.record(entry);
  }
}

/**
 * The server and tool a call may be labelled with: only those of a call that reached a
 * listed tool. A denied call's names can be the client's own text (a name that matched
 * nothing, or arguments refused on /mcp/{any-name}): labelling them would let a client
 * mint series, and put what it typed into the metrics.
 */
function namedTool(entry: McpCallEntry): { server: string; tool: string } | undefined {
  return entry.status === 'denied' || entry.server === null ? undefined : { server: entry.server, tool: entry.tool };
}

/** The span, named and attributed as OpenTelemetry's MCP and GenAI conventions name them (mcp.method.name, gen_ai.tool.name). */
function spanOf(entry: McpCallEntry) {
  const named = namedTool(entry);
  return {
    name: named ? `tools/call ${named.server}/${named.tool}` : 'tools/call',
    startTime: entry.startedAt,
    durationMs: entry.durationMs,
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      ...(named ? { 'gen_ai.tool.name': named.tool, 'gateway.mcp.server': named.server } : {}),
      'gateway.mcp.status': entry.status,
      'gateway.tenant_id': entry.principal.tenantId,
    },
    ...(entry.status === 'ok' ? {} : { error: entry.status }),
  };
}
