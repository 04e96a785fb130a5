-- Single sign-on per tenant (OIDC, src/areas/auth/sso/): a tenant's connections to
-- its identity providers, the identities they vouch for, the short-lived sign-in
-- transactions, and which sessions an SSO sign-in started (for sign-out at the IdP).

-- A tenant admin's (or a platform admin's) connection to an OpenID provider. The
-- client secret is AES-256-GCM ciphertext, never plaintext. Several per tenant.
CREATE TABLE sso_connections (
  id                   text PRIMARY KEY,
  tenant_id            text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name                 text NOT NULL,
  issuer               text NOT NULL,
  -- Whose deny list the issuer (discovery, keys, token endpoint) is held to at every
  -- fetch: 'tenant' when a tenant admin gave it, 'platform' when a platform admin did.
  url_scope            text NOT NULL DEFAULT 'tenant' CHECK (url_scope IN ('platform', 'tenant')),
  client_id            text NOT NULL,
  client_secret        text NOT NULL,
  token_auth_method    text NOT NULL DEFAULT 'client_secret_basic'
                         CHECK (token_auth_method IN ('client_secret_basic', 'client_secret_post')),
  scopes               text[] NOT NULL DEFAULT ARRAY['openid', 'email', 'profile'],
  -- Lower-case domains: linking by e-mail, and discovery by e-mail, only for these.
  allowed_email_domains text[] NOT NULL DEFAULT '{}',
  groups_claim         text NOT NULL DEFAULT 'groups',
  -- {"<group>": "admin" | "member"}: roles follow the groups at every sign-in when set.
  role_mapping         jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The claim a SCIM-provisioned user's externalId is matched against (Entra ID: oid).
  subject_claim        text NOT NULL DEFAULT 'sub',
  jit                  boolean NOT NULL DEFAULT false,
  sso_only             boolean NOT NULL DEFAULT false,
  trust_idp_mfa        boolean NOT NULL DEFAULT false,
  enabled              boolean NOT NULL DEFAULT true,
  created_by           text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_connections_tenant_idx ON sso_connections (tenant_id);
CREATE INDEX sso_connections_domains_idx ON sso_connections USING gin (allowed_email_domains);

-- Who an IdP says a user is: (tenant, issuer, sub), never the e-mail. One identity per
-- issuer per user: an account that holds one from an issuer is never linked to another.
CREATE TABLE sso_identities (
  tenant_id      text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  issuer         text NOT NULL,
  subject        text NOT NULL,
  user_id        text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  connection_id  text REFERENCES sso_connections (id) ON DELETE SET NULL,
  -- The e-mail address the IdP gave at the last sign-in (for the admin's eyes; never a key).
  email          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, issuer, subject)
);
CREATE UNIQUE INDEX sso_identities_user_issuer_key ON sso_identities (user_id, issuer);

-- A sign-in between /start and /callback: single use, short-lived. The id is the keyed
-- hash of the browser's cookie; consumed_at marks it spent for every replica.
CREATE TABLE sso_transactions (
  id              text PRIMARY KEY,
  connection_id   text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  state_hash      text NOT NULL,
  nonce           text NOT NULL,
  code_verifier   text NOT NULL,  -- AES-256-GCM ciphertext
  return_to       text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  consumed_at     timestamptz
);
CREATE INDEX sso_transactions_expires_idx ON sso_transactions (expires_at);

-- The sessions (refresh-token families) an SSO sign-in started: what sign-out needs for
-- the IdP's end-session URL (the ID token, encrypted) and what back-channel logout ends
-- (by the IdP's sid, or by its sub). A sign-in that waits for the user's TOTP code is
-- held under its two-factor challenge until verify-2fa starts the session.
CREATE TABLE sso_sessions (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  user_id        text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  connection_id  text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  family_id      text,
  challenge_id   text,
  subject        text NOT NULL,
  sid            text,
  id_token       text NOT NULL,  -- AES-256-GCM ciphertext
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);
CREATE INDEX sso_sessions_family_idx ON sso_sessions (family_id);
CREATE INDEX sso_sessions_challenge_idx ON sso_sessions (challenge_id);
CREATE INDEX sso_sessions_subject_idx ON sso_sessions (connection_id, subject);

-- Back-channel logout tokens already acted on (their jti, hashed), until they expire.
CREATE TABLE sso_logout_tokens (
  id          text PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);

-- Linking an SSO identity to an existing account needs its local address verified:
-- set by an administrator (emailVerified), or by an SSO sign-in that created the user
-- from an address its IdP verified. Changing the address clears it.
ALTER TABLE users ADD COLUMN email_verified boolean NOT NULL DEFAULT false;
