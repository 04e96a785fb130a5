-- The full-text index takes a transaction's new entries into its pending list and the
-- writer merges the list in bulk before it commits (chunks/store.ts): one index descent
-- per distinct lexeme instead of one per lexeme of every chunk, which made a chunk's
-- insert about twice as costly on the embedded database. The list is empty whenever a
-- search runs, as with fastupdate off (0005), since the embedded database has no
-- autovacuum to merge it.
ALTER INDEX chunks_tsv_idx SET (fastupdate = on);
