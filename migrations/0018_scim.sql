-- SCIM 2.0 provisioning (issue 30): per-tenant SCIM bearer tokens, the SCIM view of
-- users (externalId, display name, profile), groups and their members, and a session
-- epoch that lets a deactivation refuse access tokens issued before it for good.
-- Independent of 0017 (SSO connections): the migrator applies every file it has not
-- recorded, in name order, so either may land first.

CREATE TABLE scim_tokens (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name          text NOT NULL,
  token_hash    text NOT NULL UNIQUE,  -- HMAC-SHA-256 with a server secret, never the token
  masked_token  text NOT NULL,
  created_by    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX scim_tokens_tenant_idx ON scim_tokens (tenant_id, id);

-- externalId is the identity provider's id of the person (Entra's objectId, Okta's id):
-- case-exact, unique within a tenant. SSO sign-in finds a provisioned user by it.
ALTER TABLE users ADD COLUMN external_id text;
CREATE UNIQUE INDEX users_tenant_external_id_key ON users (tenant_id, external_id) WHERE external_id IS NOT NULL;
-- Who manages the account: NULL for a local account, 'scim' for one a SCIM client created.
ALTER TABLE users ADD COLUMN provisioned_by text;
ALTER TABLE users ADD COLUMN display_name text;
-- The SCIM attributes kept as sent but not used by the platform (name, phoneNumbers,
-- the enterprise extension…), so that a client reads back what it wrote.
ALTER TABLE users ADD COLUMN scim_profile jsonb NOT NULL DEFAULT '{}'::jsonb;
-- Bumped when every credential of the user ends (deactivation): access tokens carry the
-- epoch they were issued in, and one from an earlier epoch is refused even after reactivation.
ALTER TABLE users ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;

CREATE TABLE scim_groups (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  display_name  text NOT NULL,
  external_id   text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- A group's display name is what the tenant's SSO roleMapping names: one group per name.
CREATE UNIQUE INDEX scim_groups_name_key ON scim_groups (tenant_id, lower(display_name));
CREATE UNIQUE INDEX scim_groups_external_id_key ON scim_groups (tenant_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE scim_group_members (
  group_id  text NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
  user_id   text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user_idx ON scim_group_members (user_id);
