-- requires: vector
-- Only the vectors of large collections are kept in the HNSW graphs. A collection
-- of up to EXACT_SCAN_MAX_CHUNKS chunks is searched by an exact scan anyway, and
-- keeping its vectors in a graph cost ~4 ms a chunk at ingestion (45 % of the
-- embedded database's time per chunk). `indexed` says which rows the graphs hold:
-- new rows of a large collection go in at once, a collection that grows past the
-- limit has its older rows put in a few hundred at a time, and search scans exactly
-- whatever is not in a graph yet (chunks/vector-index.ts, retrieval/vector.ts).
ALTER TABLE chunk_vectors ADD COLUMN indexed boolean NOT NULL DEFAULT false;
UPDATE chunk_vectors cv SET indexed = true FROM collections c WHERE c.id = cv.collection_id AND c.chunk_count > 5000;

-- Every size's graph is remade over the indexed rows only (100 here; the others the
-- first time a vector of their size is written again).
DO $$
DECLARE name text;
BEGIN
  FOR name IN SELECT indexname FROM pg_indexes WHERE tablename = 'chunk_vectors' AND indexname LIKE 'chunk_vectors_hnsw_%' LOOP
    EXECUTE format('DROP INDEX %I', name);
  END LOOP;
END $$;
CREATE INDEX chunk_vectors_hnsw_100 ON chunk_vectors USING hnsw ((embedding::vector(100)) vector_cosine_ops)
  WHERE dimensions = 100 AND indexed;
-- The rows still to be put in a graph, for the catch-up and the exact part of an index search.
CREATE INDEX chunk_vectors_unindexed_idx ON chunk_vectors (collection_id, embedder) WHERE NOT indexed;
