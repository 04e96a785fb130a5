// Where a search's time goes: the steps of retrieval (retrieval/search.ts) timed one
// by one over the same queries, in the gateway's own functions: resolving the scope,
// embedding the query, the lexical leg (BM25) and the vector leg (kNN, the plan
// retrieval would pick). What is left of the HTTP figure is fusion, reading the
// snippets and the API itself.
import { lexicalCandidates } from '../../src/areas/os/retrieval/lexical.js';
import { resolveScopes } from '../../src/areas/os/retrieval/scopes.js';
import { vectorCandidates } from '../../src/areas/os/retrieval/vector.js';
import type { Database } from '../../src/platform/db/database.js';
import { summarize, type Summary } from '../support/stats.js';

export interface SearchSteps {
  queries: number;
  scopeMs: Summary;
  embedMs: Summary;
  lexicalMs: Summary;
  vectorMs: Summary;
  /** Chunks matching any of the query's lexemes: the rows the BM25 query reads and scores. */
  matchedChunks: Summary;
}

export async function profileSearch(
  db: Database,
  tenantId: string,
  collectionId: string,
  queries: string[],
  embed: (texts: string[]) => Promise<ArrayLike<number>[]>,
  budgetMs: number,
): Promise<SearchSteps> {
  const began = performance.now();
  const steps = { scope: [] as number[], embed: [] as number[], lexical: [] as number[], vector: [] as number[], matched: [] as number[] };
  for (const query of queries) {
    if (steps.lexical.length >= 5 && performance.now() - began > budgetMs) break;
    let started = performance.now();
    const [scope] = await resolveScopes(db, tenantId, { collectionIds: [collectionId] });
    steps.scope.push(performance.now() - started);
    const collection = scope?.collections[0];
    if (!collection?.embedder) throw new Error(`collection ${collectionId} has no embedder to profile`);
    started = performance.now();
    const [vector] = await embed([query]);
    steps.embed.push(performance.now() - started);
    started = performance.now();
    const lexical = await lexicalCandidates(db, { tenantId, collections: [collection], documentIds: null, query });
    steps.lexical.push(performance.now() - started);
    if (lexical.length > 0) steps.matched.push(await matchingChunks(db, tenantId, collection.id, collection.language, query));
    started = performance.now();
    await vectorCandidates(db, {
      tenantId,
      collectionIds: [collection.id],
      chunkCount: collection.chunkCount,
      documentIds: null,
      embedder: collection.embedder.model,
      dimensions: collection.embedder.dimensions,
      vector: vector!,
    });
    steps.vector.push(performance.now() - started);
  }
  return {
    queries: steps.lexical.length,
    scopeMs: summarize(steps.scope),
    embedMs: summarize(steps.embed),
    lexicalMs: summarize(steps.lexical),
    vectorMs: summarize(steps.vector),
    matchedChunks: summarize(steps.matched),
  };
}

async function matchingChunks(db: Database, tenantId: string, collectionId: string, language: string, query: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chunks c
     WHERE c.tenant_id = $1 AND c.collection_id = $2
       AND c.tsv @@ (SELECT string_agg(quote_literal(u.lexeme), ' | ')::tsquery FROM unnest(to_tsvector($3::regconfig, $4)) u)`,
    [tenantId, collectionId, language, query],
  );
  return row?.n ?? 0;
}
