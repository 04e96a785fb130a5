-- The reranker a collection's searches reorder their fused candidates with (a model on a
-- compute node, POST /api/llm/v1/rerank's); NULL: no reranking, the fused order stands.
ALTER TABLE collections ADD COLUMN rerank_model text;
