-- Per-request model usage: who (tenant, key or user), what (model, node), how
-- much (tokens), how it went (status, latency). Written in batches, never on the
-- request path. No foreign keys on purpose: usage outlives deleted tenants, keys and nodes,
-- and a batch can never be refused because one of them went away.
CREATE TABLE usage_records (
  id                 bigserial PRIMARY KEY,
  tenant_id          text NOT NULL,
  principal_kind     text NOT NULL CHECK (principal_kind IN ('user', 'apiKey')),
  principal_id       text NOT NULL,
  customer_id        text,
  endpoint           text NOT NULL,
  model              text NOT NULL,
  node_id            text,
  stream             boolean NOT NULL,
  prompt_tokens      integer NOT NULL DEFAULT 0,
  completion_tokens  integer NOT NULL DEFAULT 0,
  latency_ms         integer NOT NULL,
  status             text NOT NULL,
  correlation_id     text,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_records_tenant_idx ON usage_records (tenant_id, created_at);
