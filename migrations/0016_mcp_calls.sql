-- The audit of MCP tool calls (src/areas/llm/mcp/calls/): one row per tools/call the
-- endpoint answered, whatever its outcome. Never the arguments or the result: their
-- SHA-256 and sizes only. server is NULL when the name called matched no tool.
CREATE TABLE mcp_calls (
  id                text PRIMARY KEY,
  tenant_id         text NOT NULL,
  at                timestamptz NOT NULL,
  server            text,
  tool              text NOT NULL,
  key_id            text,
  user_id           text,
  status            text NOT NULL CHECK (status IN ('ok', 'error', 'denied', 'timeout', 'cancelled')),
  duration_ms       integer NOT NULL,
  arguments_sha256  text NOT NULL,
  arguments_bytes   integer NOT NULL,
  -- NULL: the call produced no result.
  result_bytes      integer
);
-- Listed per tenant, newest first (ids sort by time), filtered by time, server and tool.
CREATE INDEX mcp_calls_tenant_idx ON mcp_calls (tenant_id, id DESC);
CREATE INDEX mcp_calls_tenant_at_idx ON mcp_calls (tenant_id, at);
