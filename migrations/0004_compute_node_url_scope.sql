-- Whose deny list a node's URL is held to, at every connection and not only when
-- saved: 'tenant' when a tenant admin gave the URL (the tenant deny list keeps out
-- private ranges too), 'platform' when a platform admin did. Without it a tenant
-- admin's host name, checked against the tenant list when saved, could later be
-- re-pointed (DNS rebinding) at an address only the platform list allows.
ALTER TABLE compute_nodes ADD COLUMN url_scope text NOT NULL DEFAULT 'tenant' CHECK (url_scope IN ('platform', 'tenant'));

-- Existing rows: 'platform' only where a platform admin created the node and no
-- tenant admin can have changed its URL since (a node for exactly one tenant is
-- that tenant admin's to change: unless it was never updated, it stays 'tenant').
UPDATE compute_nodes SET url_scope = 'platform'
 WHERE created_by IN (SELECT id FROM users WHERE 'platform_admin' = ANY (roles))
   AND (cardinality(tenant_ids) <> 1 OR updated_at = created_at);
