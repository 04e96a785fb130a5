// The lexical leg: full-text candidates from the GIN index, ranked by BM25 with the
// corpus statistics ingestion keeps (collection_terms.df, collections.chunk_count and
// total_length), summed over the collections searched together. PostgreSQL's own
// ts_rank knows neither document frequency nor length normalisation in BM25's sense.
import type { Queryable } from '../../../platform/db/database.js';
import type { SearchCollection } from './scopes.js';

/** BM25's term-frequency saturation and length normalisation (the usual values). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/**
 * An occurrence in the title or heading path (weight A) counts this many times: a
 * passage under "Refund policy" is about refunds even where its text says "it".
 */
export const TITLE_WEIGHT = 3;
/** Candidates the leg hands to fusion. */
export const LEXICAL_CANDIDATES = 50;

export interface LexicalHit {
  chunkId: string;
  bm25: number;
  /**
   * 0..1: the BM25 score over the query's idf mass (the score of a passage of average
   * length holding every query term once), capped at 1. Query terms the corpus lacks
   * count in the mass at their full idf, so a question about something else scores low.
   */
  relevance: number;
}

export interface LexicalSearch {
  tenantId: string;
  /** Collections of one language: they share the query's lexemes and the statistics. */
  collections: SearchCollection[];
  documentIds: string[] | null;
  query: string;
  limit?: number;
}

interface QueryTerm {
  term: string;
  idf: number;
}

export async function lexicalCandidates(q: Queryable, search: LexicalSearch): Promise<LexicalHit[]> {
  const { collections, tenantId } = search;
  const language = collections[0]?.language;
  if (!language) return [];
  const collectionIds = collections.map((c) => c.id);
  const chunkCount = collections.reduce((sum, c) => sum + c.chunkCount, 0);
  if (chunkCount === 0) return [];
  const avgLength = Math.max(1, collections.reduce((sum, c) => sum + c.totalLength, 0) / chunkCount);

  // The query's lexemes in the collections' language, with their document frequency there.
  const stats = await q.query<{ term: string; df: number }>(
    `SELECT u.lexeme AS term,
            COALESCE((SELECT sum(ct.df) FROM collection_terms ct JOIN collections c ON c.id = ct.collection_id
                      WHERE c.tenant_id = $1 AND ct.collection_id = ANY($2::text[]) AND ct.term = u.lexeme), 0)::float8 AS df
     FROM unnest(to_tsvector($3::regconfig, $4)) u`,
    [tenantId, collectionIds, language, search.query],
  );
  const terms: QueryTerm[] = stats.map(({ term, df }) => ({ term, idf: Math.log(1 + (chunkCount - df + 0.5) / (df + 0.5)) }));
  const present = terms.filter((t) => stats.find((s) => s.term === t.term)!.df > 0);
  if (present.length === 0) return [];
  const idfMass = terms.reduce((sum, t) => sum + t.idf, 0);

  const rows = await q.query<{ id: string; bm25: number }>(
    `SELECT c.id, sum(t.idf * s.tf * ($5::float8 + 1) / (s.tf + $5::float8 * (1 - $6::float8 + $6::float8 * c.length / $7::float8)))::float8 AS bm25
     FROM chunks c
     CROSS JOIN LATERAL unnest(c.tsv) u
     JOIN unnest($3::text[], $4::float8[]) AS t(term, idf) ON t.term = u.lexeme
     CROSS JOIN LATERAL (SELECT cardinality(u.positions) + $8::int * cardinality(array_positions(u.weights, 'A')) AS tf) s
     WHERE c.tenant_id = $1 AND c.collection_id = ANY($2::text[]) AND c.tsv @@ $9::tsquery
       AND ($10::text[] IS NULL OR c.document_id = ANY($10::text[]))
     GROUP BY c.id
     ORDER BY bm25 DESC, c.id
     LIMIT $11`,
    [
      tenantId,
      collectionIds,
      present.map((t) => t.term),
      present.map((t) => t.idf),
      BM25_K1,
      BM25_B,
      avgLength,
      TITLE_WEIGHT - 1,
      anyOf(present.map((t) => t.term)),
      search.documentIds,
      search.limit ?? LEXICAL_CANDIDATES,
    ],
  );
  return rows.map((row) => ({ chunkId: row.id, bm25: row.bm25, relevance: Math.min(1, row.bm25 / idfMass) }));
}

/** A tsquery matching any of the lexemes, taken as they are (already normalised: no second stemming). */
export function anyOf(lexemes: string[]): string {
  return lexemes.map((lexeme) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`).join(' | ');
}
