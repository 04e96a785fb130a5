-- The MCP tools an API key may see and call (src/platform/mcp-grants.ts):
-- {"allow": ["server/*", "server/tool"]}, set by a tenant admin. NULL: none (a new
-- key reaches no tool). Read into the cached key validation, never per request.
ALTER TABLE api_keys ADD COLUMN mcp jsonb;
