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

/**
 * Chunks read and scored per language group at most. Candidates come from the query's
 * rarest terms first (the ones that carry its meaning), adding terms while their
 * summed document frequency stays within this budget; commoner terms still count in
 * the score of every candidate, they just do not bring in candidates of their own.
 * Only a query made of nothing but very common terms is cut to this many matches.
 */
export const CANDIDATE_BUDGET = 1000;

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
    `SELECT DISTINCT u.lexeme AS term,
            COALESCE((SELECT sum(ct.df) FROM collection_terms ct JOIN collections c ON c.id = ct.collection_id
                      WHERE c.tenant_id = $1 AND ct.collection_id = ANY($2::text[]) AND ct.term = u.lexeme), 0)::float8 AS df
     FROM unnest(to_tsvector($3::regconfig, $4)) u`,
    [tenantId, collectionIds, language, search.query],
  );
  const terms = stats.map(({ term, df }) => ({ term, df, idf: Math.log(1 + (chunkCount - df + 0.5) / (df + 0.5)) }));
  const idfMass = terms.reduce((sum, t) => sum + t.idf, 0);
  const present = terms.filter((t) => t.df > 0).sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1));
  if (present.length === 0) return [];
  const essential: typeof present = [];
  let postings = 0;
  for (const t of present) {
    if (essential.length > 0 && postings + t.df > CANDIDATE_BUDGET) break;
    essential.push(t);
    postings += t.df;
  }

  // Each term's occurrences, and those in the title or heading path, read through ts_rank
  // (see TF_OF_RANK), on one in-memory copy of the tsvector per chunk (`|| ''`: three times
  // faster than ts_rank on the stored column, measured).
  const rows = await q.query<{ id: string; bm25: number }>(
    `WITH matched AS MATERIALIZED (
       SELECT c.id, c.length, c.tsv || ''::tsvector AS tsv FROM chunks c
       WHERE c.tenant_id = $1 AND c.collection_id = ANY($2::text[]) AND c.tsv @@ $3::tsquery
         AND ($4::text[] IS NULL OR c.document_id = ANY($4::text[]))
       LIMIT $5
     ), frequencies AS (
       SELECT m.id, m.length, t.idf, ${tfOfRank('r.any_weight')} + $10::int * ${tfOfRank('r.title')} AS tf
       FROM matched m
       CROSS JOIN unnest($6::tsquery[], $7::float8[]) AS t(query, idf)
       CROSS JOIN LATERAL (SELECT ts_rank('{1,1,1,1}', m.tsv, t.query) AS any_weight, ts_rank('{0,0,0,1}', m.tsv, t.query) AS title) r
     )
     SELECT id, sum(idf * tf * ($8::float8 + 1) / (tf + $8::float8 * (1 - $9::float8 + $9::float8 * length / $11::float8)))::float8 AS bm25
     FROM frequencies WHERE tf > 0
     GROUP BY id
     ORDER BY bm25 DESC, id
     LIMIT $12`,
    [
      tenantId,
      collectionIds,
      anyOf(essential.map((t) => t.term)),
      search.documentIds,
      CANDIDATE_BUDGET,
      present.map((t) => anyOf([t.term])),
      present.map((t) => t.idf),
      BM25_K1,
      BM25_B,
      TITLE_WEIGHT - 1,
      avgLength,
      search.limit ?? LEXICAL_CANDIDATES,
    ],
  );
  return rows.map((row) => ({ chunkId: row.id, bm25: row.bm25, relevance: Math.min(1, row.bm25 / idfMass) }));
}

/** A tsquery matching any of the lexemes, taken as they are (already normalised: no second stemming). */
export function anyOf(lexemes: string[]): string {
  return lexemes.map((lexeme) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`).join(' | ');
}

/**
 * The number of positions of a lexeme, from ts_rank of a one-lexeme query. With every
 * weight 1, PostgreSQL's calc_rank_or gives r = H(tf) / ζ(2), H(n) = Σ 1/j² for j = 1..n:
 * computed in C without unpacking the tsvector (unnest(tsv) costs ~0.1 ms a chunk here).
 * Since ζ(2) − H(n) ≈ 1/(n + ½), tf = round(1 / (ζ(2)·(1 − r)) − ½): exact as far as float4
 * allows (to ~100 positions; ±1 beyond, where BM25 has long saturated). With only weight A
 * counted it gives the occurrences in the title and heading path, which come first in every
 * chunk's tsvector (store.ts), so the same formula holds.
 */
export const tfOfRank = (rank: string): string =>
  `(CASE WHEN ${rank} > 0 THEN round(1 / (1.64493406685 * (1 - ${rank}::float8)) - 0.5) ELSE 0 END)`;
