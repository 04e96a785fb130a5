-- requires: vector
-- Chunk embeddings. One row per chunk and embedder, so a collection can fill a
-- new embedder's vectors while retrieval still reads the old ones. Dimensions
-- differ by embedder, so the column is an untyped vector and each size gets its
-- own partial HNSW index over a cast (created on first use; the built-in word
-- vectors' 100 here). Retrieval filters by collection with hnsw.iterative_scan.
CREATE TABLE chunk_vectors (
  chunk_id       text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
  collection_id  text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  embedder       text NOT NULL,
  dimensions     integer NOT NULL,
  embedding      vector NOT NULL,
  PRIMARY KEY (chunk_id, embedder)
);
CREATE INDEX chunk_vectors_collection_idx ON chunk_vectors (collection_id, embedder);
CREATE INDEX chunk_vectors_hnsw_100 ON chunk_vectors USING hnsw ((embedding::vector(100)) vector_cosine_ops) WHERE dimensions = 100;

-- Default collections made before vectors were available (0005's backfill, or a
-- PostgreSQL server that lacked pgvector until now) take the built-in embedder while
-- they are still empty, as new ones do; a collection with chunks is re-embedded only
-- when its embeddingModel is changed.
UPDATE collections SET embedding_model = 'gateway-word-vectors-en', embedding_dimensions = 100
WHERE is_default AND embedding_model IS NULL AND chunk_count = 0;
