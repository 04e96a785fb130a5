-- Rate limits and token budgets (src/platform/rate-limits/limits.ts): set on a key by a
-- tenant admin, on a tenant by a platform admin. NULL: none. Read into the cached key
-- validation and the cached tenant settings, never per request.
ALTER TABLE api_keys ADD COLUMN limits jsonb;
ALTER TABLE tenants ADD COLUMN limits jsonb;
