-- MCP servers (tool servers) registered through the API, scoped like compute nodes:
-- tenant_ids empty = shared with every tenant (a platform admin's, read-only to
-- tenants); one tenant id = that tenant's own, managed by its admin; several = a
-- platform admin's server for the tenants named. No foreign key on tenant_ids
-- (arrays cannot carry one); tenants are disabled, never deleted.
--
-- Names are unique among the servers one tenant sees (they prefix its tools): the
-- service checks it under a lock on this table, since "overlapping tenant_ids"
-- cannot be a unique index.
CREATE TABLE mcp_servers (
  id               text PRIMARY KEY,
  name             text NOT NULL CHECK (name ~ '^[a-z0-9-]{1,32}$'),
  url              text NOT NULL,
  -- Whose deny list the URLs (server and OAuth token endpoint) are held to at every
  -- connection: 'tenant' when a tenant admin gave them, 'platform' when a platform admin did.
  url_scope        text NOT NULL DEFAULT 'tenant' CHECK (url_scope IN ('platform', 'tenant')),
  -- {type, ...}: non-secret fields as given, every secret (token, header values,
  -- clientSecret) as AES-256-GCM ciphertext, never plaintext.
  auth             jsonb NOT NULL DEFAULT '{"type": "none"}',
  timeout_seconds  integer NOT NULL DEFAULT 60 CHECK (timeout_seconds BETWEEN 1 AND 3600),
  tenant_ids       text[] NOT NULL DEFAULT '{}',
  -- The last listing's outcome: 'unknown' (never listed), 'ok', 'changed' (differs
  -- from the pinned tools, awaiting approval), 'empty', 'error'.
  status_state     text NOT NULL DEFAULT 'unknown' CHECK (status_state IN ('unknown', 'ok', 'changed', 'empty', 'error')),
  status_error     text,
  checked_at       timestamptz,
  -- The tools served: [{name, sha256, definition}], as first listed or last approved. NULL: never pinned.
  pinned_tools     jsonb,
  -- The upstream's listing when it differs from the pinned tools: what an approval would pin.
  pending_tools    jsonb,
  created_by       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_servers_tenant_idx ON mcp_servers USING gin (tenant_ids);
