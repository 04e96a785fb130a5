-- Compute nodes added through the API (nodes from GATEWAY_NODES and the local
-- engine live in config, not here). tenant_ids empty = the node serves every
-- tenant; a node whose tenant_ids is exactly one tenant is that tenant's own and
-- its admin manages it. No foreign key on tenant_ids (arrays cannot carry one);
-- tenants are disabled, never deleted.
CREATE TABLE compute_nodes (
  id                 text PRIMARY KEY,
  name               text NOT NULL,
  engine             text NOT NULL CHECK (engine IN ('openai', 'ollama')),
  url                text NOT NULL,
  api_key_encrypted  text,            -- AES-256-GCM ciphertext, never plaintext
  tenant_ids         text[] NOT NULL DEFAULT '{}',
  enabled            boolean NOT NULL DEFAULT true,
  created_by         text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX compute_nodes_tenant_idx ON compute_nodes USING gin (tenant_ids);
