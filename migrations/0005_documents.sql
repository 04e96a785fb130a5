-- Documents the tenant grounds answers in (the os area): collections inside
-- workspaces, documents inside collections, and the chunks retrieval searches.
-- Vectors live in chunk_vectors (0006), which needs pgvector; everything here
-- works without it, so a PostgreSQL server lacking the extension still searches
-- lexically.

CREATE TABLE collections (
  id                       text PRIMARY KEY,
  tenant_id                text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  workspace_id             text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name                     text NOT NULL,
  description              text,
  -- The text-search configuration (pg_ts_config) its chunks are indexed and queried with.
  language                 text NOT NULL DEFAULT 'english',
  is_default               boolean NOT NULL DEFAULT false,
  -- The embedder whose vectors retrieval reads; null: lexical only.
  embedding_model          text,
  embedding_dimensions     integer,
  -- A new embedder being filled in the background; swapped in when every chunk has its vector.
  pending_embedding_model  text,
  -- Kept by ingestion and deletion in the same transaction as the rows they count;
  -- total_length (lexemes over all chunks) gives BM25 its average chunk length.
  document_count           integer NOT NULL DEFAULT 0,
  chunk_count              integer NOT NULL DEFAULT 0,
  total_length             bigint NOT NULL DEFAULT 0,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX collections_workspace_idx ON collections (tenant_id, workspace_id, id);
CREATE UNIQUE INDEX collections_default_key ON collections (workspace_id) WHERE is_default;

-- Every existing workspace gets its default collection (new ones get it when created).
-- The id has the shape of platform/ids.ts: col_ and 26 Crockford base32 characters.
INSERT INTO collections (id, tenant_id, workspace_id, name, description, is_default)
SELECT 'col_' || (SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                    get_byte(decode(md5(w.id || ':' || i), 'hex'), 0) % 32 + 1, 1), '' ORDER BY i)
                  FROM generate_series(1, 26) AS i),
       w.tenant_id, w.id, 'Default', 'Documents uploaded to the workspace itself', true
FROM workspaces w;

-- status: queued → processing → ready | failed; stage says where processing is.
-- The row is also the ingestion job: lease_until fences the replica working on it.
CREATE TABLE documents (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  collection_id    text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  workspace_id     text NOT NULL,
  name             text NOT NULL,
  media_type       text NOT NULL,
  bytes            bigint NOT NULL,
  sha256           text NOT NULL,
  status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
  stage            text,
  error            text,
  chunk_count      integer NOT NULL DEFAULT 0,
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  attempts         integer NOT NULL DEFAULT 0,
  run_after        timestamptz NOT NULL DEFAULT now(),
  lease_until      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
-- The same content twice in one collection is one document.
CREATE UNIQUE INDEX documents_content_key ON documents (collection_id, sha256);
CREATE INDEX documents_collection_idx ON documents (tenant_id, collection_id, id);
CREATE INDEX documents_pending_idx ON documents (run_after) WHERE status IN ('queued', 'processing');

-- The uploaded bytes, kept apart so listing documents never reads them.
CREATE TABLE document_contents (
  document_id  text PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
  content      bytea NOT NULL
);

-- What retrieval sees. tsv holds title and heading path (weight A) and the text (D),
-- built with the collection's language; length is its lexeme count, for BM25.
CREATE TABLE chunks (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL,
  collection_id  text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  document_id    text NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  chunk_index    integer NOT NULL,
  content        text NOT NULL,
  title          text NOT NULL,
  heading_path   text[] NOT NULL DEFAULT '{}',
  page           integer,
  token_count    integer NOT NULL,
  tsv            tsvector NOT NULL,
  length         integer NOT NULL
);
CREATE INDEX chunks_document_idx ON chunks (document_id, chunk_index);
CREATE INDEX chunks_collection_idx ON chunks (collection_id);
-- fastupdate off: the embedded database runs no autovacuum, so a pending list would never
-- be merged and would make every search scan it (and the planner give up on the index).
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv) WITH (fastupdate = off);

-- BM25's document frequencies: in how many chunks of the collection each lexeme occurs.
CREATE TABLE collection_terms (
  collection_id  text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  term           text NOT NULL,
  df             integer NOT NULL,
  PRIMARY KEY (collection_id, term)
);
