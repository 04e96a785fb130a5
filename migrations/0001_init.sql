-- Foundation schema: platform secrets, tenants, users, sessions, two-factor,
-- API keys, workspaces. Every tenant-owned row carries tenant_id.

CREATE TABLE platform_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tenants (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  settings        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tenants_name_key ON tenants (lower(name));

-- Login takes a username or an e-mail with no tenant, so both are unique platform-wide.
CREATE TABLE users (
  id                 text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  username           text NOT NULL,
  email              text,
  password_hash      text NOT NULL,
  roles              text[] NOT NULL DEFAULT ARRAY['member'],
  status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  totp_secret        text,            -- AES-256-GCM ciphertext, never plaintext
  totp_enabled       boolean NOT NULL DEFAULT false,
  totp_last_step     bigint,          -- last accepted time step: a code works once
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_username_key ON users (lower(username));
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE email IS NOT NULL;
CREATE INDEX users_tenant_idx ON users (tenant_id);

CREATE TABLE recovery_codes (
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  used_at     timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- Refresh tokens rotate: each use marks the row rotated and issues a child in the same family.
CREATE TABLE refresh_tokens (
  id           text PRIMARY KEY,
  family_id    text NOT NULL,
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  rotated_at   timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user_idx ON refresh_tokens (user_id);

CREATE TABLE two_factor_challenges (
  id           text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash   text NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  consumed_at  timestamptz
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  customer_id   text,
  name          text NOT NULL,
  key_hash      text NOT NULL UNIQUE,  -- HMAC-SHA-256 with a server secret
  masked_key    text NOT NULL,
  scopes        jsonb NOT NULL DEFAULT '[]'::jsonb,
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_by    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);

CREATE TABLE workspaces (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name         text NOT NULL,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workspaces_tenant_idx ON workspaces (tenant_id, id);
