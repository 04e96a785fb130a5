-- A collection changing embedder is re-embedded a batch at a time by whichever ingestion
-- worker claims it: this lease lets one worker (of any replica) work a collection at a
-- time, so no batch is sent to the embedder twice. NULL or past: free to claim.
ALTER TABLE collections ADD COLUMN reembed_lease_until timestamptz;
