// What the llm area reports as it works, for /metrics (platform/metrics/metrics.ts
// implements it). Absent when metrics are off: every call site is `observer?.…`, so
// the request path pays nothing then.

/** A compute node as the metrics label it (a router NodeView fits: the router imports this file, not the reverse). */
export interface ObservedNode {
  id: string;
  engine: string;
}

export interface LlmObserver {
  /** A node accepted a model call `ms` after it was asked (a whole JSON answer, or a stream's head). */
  engineAccepted(node: ObservedNode, ms: number): void;
  /** A model call failed: an EngineError's failure kind, `other`, or `mid_stream`. */
  engineFailed(node: ObservedNode, failure: string): void;
  /** One usage record's tokens (every endpoint). */
  usage(model: string, tenantId: string, promptTokens: number, completionTokens: number): void;
  /** A stream's first output from the engine, `ms` after the request was routed. */
  firstTokenAfter(model: string, ms: number): void;
  /** The gateway's own time on one chat request (its Server-Timing `gateway` entry). */
  gatewayOverhead(stream: boolean, ms: number): void;
  streamOpened(): void;
  streamClosed(): void;
  /** A request refused with 429 by a rate limit or quota (`key`/`tenant`, e.g. `requestsPerMinute`). */
  rateLimitRejected(scope: string, limit: string): void;
  /**
   * One MCP tool call that ended (what its audit record says): the tenant, the server's
   * name and the tool's upstream name (null server and empty tool: a denied call, whose
   * names may be the client's text and must not become labels), its status, its duration.
   */
  mcpCall(tenantId: string, server: string | null, tool: string, status: string, ms: number): void;
}
