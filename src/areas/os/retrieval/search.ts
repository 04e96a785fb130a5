// Retrieval: the passages of the tenant's documents that answer a query, for grounding
// (the llm area gets `retrieve` from the composition root) and POST /api/os/search.
// Hybrid by default: BM25 over the full-text index and cosine kNN over the vectors of
// each collection's embedder, fused by reciprocal rank into one ranking (fusion.ts);
// then one decision per query and scope: is it answerable (answerability.ts)? If so
// the top-k of the ranking, if not nothing. A scope with a reranker (rerank.ts) has its
// best fused candidates reordered, and answerability decided, by the reranker's score.
import type { Database } from '../../../platform/db/database.js';
import { ALIGNED_CANDIDATES, type Aligner, alignHead } from './alignment-rank.js';
import { evidenceOf, isAnswerable } from './answerability.js';
import { spreadHead } from './diversity.js';
import { FUSION, fuse, type FusedHit } from './fusion.js';
import { LEXICAL_CANDIDATES, lexicalCandidates, type LexicalHit } from './lexical.js';
import { retrievalRepository, type SnippetRow } from './repository.js';
import type { Mode, RetrievalRequest, RetrievalResult, RetrievalStatus, Snippet } from '../../grounding.js';
import { EmbedderUnavailableError } from '../embedders/errors.js';
import { RERANK_CANDIDATES, rerankFused, type RerankingDeps } from './rerank.js';
import { resolveScopes, type SearchCollection, type SearchScope } from './scopes.js';
import { VECTOR_CANDIDATES, type VectorHit, vectorCandidates } from './vector.js';

export interface RetrievalDeps extends RerankingDeps {
  db: Database;
  /** Whether pgvector is there; without it retrieval is lexical only, and says so. */
  vector: boolean;
  embedQuery: QueryEmbedder;
  /** The built-in word vectors' alignment, for re-ordering the fused ranking's head (English collections). */
  align?: Aligner;
}

/** Embeds a query with a collection's embedder; throws EmbedderUnavailableError when it cannot (node down, model unknown, built-in still preparing). */
export type QueryEmbedder = (tenantId: string, embedder: string, text: string) => Promise<ArrayLike<number>>;

export { EmbedderUnavailableError };
export type { RetrievalRequest, RetrievalResult };

export async function retrieve(deps: RetrievalDeps, tenantId: string, request: RetrievalRequest): Promise<RetrievalResult> {
  const scopes = await resolveScopes(deps.db, tenantId, request);
  const requested = request.mode ?? 'hybrid';
  const skipped = new Map<string, EmbedderUnavailableError>();
  const queryVectors =
    requested === 'lexical' || !deps.vector ? new Map() : await embedQuery(deps, tenantId, scopes, request.query, skipped);
  const embedders = [...queryVectors.entries()].filter(([, v]) => v !== null).map(([key]) => key.split('\u0000')[0]!);
  const vectorRan = embedders.length > 0;
  const mode: Mode = requested === 'lexical' || !vectorRan ? 'lexical' : requested;
  const unavailable = [...queryVectors.values()].some((v) => v === null);

  const chosen = new Map<string, FusedHit>();
  const rows = new Map<string, SnippetRow>();
  const rerankers = new Set<'applied' | 'unavailable'>();
  for (const scope of scopes) {
    const legs = await searchLegs(deps, tenantId, scope, request.query, mode, queryVectors);
    const { hits, reranker } = await rankScope(deps, tenantId, scope, request.query, legs, rows);
    if (reranker) rerankers.add(reranker);
    for (const hit of hits) {
      const seen = chosen.get(hit.chunkId);
      if (!seen || seen.fused < hit.fused) chosen.set(hit.chunkId, hit);
    }
  }
  const ranked = [...chosen.values()].sort((a, b) => b.fused - a.fused || b.score - a.score);
  const snippets = await toSnippets(deps, tenantId, ranked, rows);
  const retrieval = {
    mode,
    embedder: embedders.length ? [...new Set(embedders)].join(', ') : null,
    ...(skipped.size ? { note: noteOn(skipped) } : {}),
    // Any scope's reranker that could not answer: that scope kept its fused order.
    ...(rerankers.size ? { reranker: rerankers.has('unavailable') ? ('unavailable' as const) : ('applied' as const) } : {}),
  };
  if (snippets.length) return { snippets, status: 'active', retrieval };
  return { snippets, status: await emptyStatus(deps, tenantId, scopes, unavailable), retrieval };
}

export interface Legs {
  lexical: LexicalHit[];
  vector: VectorHit[];
}

/** Each leg's candidates for one scope, best first (empty for a leg the mode leaves out). */
export async function searchLegs(
  deps: RetrievalDeps,
  tenantId: string,
  scope: SearchScope,
  query: string,
  mode: Mode,
  queryVectors: Map<string, ArrayLike<number> | null>,
): Promise<Legs> {
  // Side by side: on a PostgreSQL server each leg gets its own connection (the embedded database queues them).
  const [lexical, vector] = await Promise.all([
    mode === 'vector' ? [] : lexicalLeg(deps, tenantId, scope, query),
    mode === 'lexical' ? [] : vectorLeg(deps, tenantId, scope, queryVectors),
  ]);
  return { lexical, vector };
}

/**
 * One scope's answer: the fused ranking, its head re-ordered by word alignment (English
 * collections) and, where the scope names a rerank model, by that model (rerank.ts);
 * then nothing when the evidence does not hold up (the reranker's score where it
 * answered, answerability.ts otherwise), else its top-k, the first places spread over
 * documents where no reranker ordered them (diversity.ts). `rows` collects the passages
 * read for the alignment, for the snippets.
 */
export async function rankScope(
  deps: RetrievalDeps,
  tenantId: string,
  scope: SearchScope,
  query: string,
  legs: Legs,
  rows: Map<string, SnippetRow>,
): Promise<{ hits: FusedHit[]; reranker?: 'applied' | 'unavailable' }> {
  const fused = fuse(legs.lexical, legs.vector);
  const head = fused.slice(0, ALIGNED_CANDIDATES);
  // The word vectors are English: other languages keep the fused order.
  const align = scope.collections.every((c) => c.language === 'english') ? deps.align : undefined;
  if (align) await readRows(deps, tenantId, head, rows);
  const aligned = await alignHead(align, query, head, rows, FUSION.k);
  let ranked: FusedHit[] = [...aligned.hits, ...fused.slice(ALIGNED_CANDIDATES)];
  let answerable: boolean | undefined;
  let reranker: 'applied' | 'unavailable' | undefined;
  if (scope.rerankModel) {
    const candidates = ranked.slice(0, RERANK_CANDIDATES);
    await readRows(deps, tenantId, candidates, rows);
    const reranked = await rerankFused(deps.rerank, tenantId, query, scope.rerankModel, candidates, (id) => rows.get(id)?.content);
    reranker = reranked.reranker;
    if (reranked.reranker === 'applied') [ranked, answerable] = [reranked.hits, reranked.answerable];
  }
  answerable ??= isAnswerable(evidenceOf(legs.lexical, legs.vector, aligned.best));
  if (!answerable) return { hits: [], ...(reranker ? { reranker } : {}) };
  // A reranker's order is its judgement and stands; the fused order gets its head spread over documents.
  if (reranker !== 'applied') {
    await readRows(deps, tenantId, ranked.slice(0, ALIGNED_CANDIDATES), rows);
    ranked = spreadHead(ranked, (id) => rows.get(id)?.document_id);
  }
  // The order is final here: `fused` becomes the position's reciprocal rank, which is what merges scopes.
  const hits = ranked
    .filter((hit) => hit.score >= scope.minScore)
    .slice(0, scope.topK)
    .map((hit, i) => ({ ...hit, fused: 1 / (FUSION.k + i + 1) }));
  return { hits, ...(reranker ? { reranker } : {}) };
}

async function readRows(deps: RetrievalDeps, tenantId: string, hits: FusedHit[], rows: Map<string, SnippetRow>): Promise<void> {
  const missing = hits.map((h) => h.chunkId).filter((id) => !rows.has(id));
  if (missing.length) for (const row of await retrievalRepository.snippets(deps.db, tenantId, missing)) rows.set(row.id, row);
}

const embedderKey = (e: { model: string; dimensions: number }) => `${e.model}\u0000${e.dimensions}`;

/**
 * Why vectors were left out, for the answer's `retrieval.note`. The built-in embedder's
 * one-off preparation is named as such (it ends by itself); a node's failure is not
 * detailed (its message may carry the node's address).
 */
function noteOn(skipped: Map<string, EmbedderUnavailableError>): string {
  const why = [...skipped.entries()].map(([model, error]) =>
    error.reason === 'preparing'
      ? `${model} is still being prepared (GET /health says when it is ready)`
      : `${model} could not embed the query`,
  );
  return `Text search only where ${why.join('; ')}.`;
}

/**
 * The query embedded once per distinct embedder of the searched collections; null where that embedder is unavailable
 * (and why, in `skipped`): search does not wait for an embedder, it falls back to text and says so.
 */
export async function embedQuery(
  deps: RetrievalDeps,
  tenantId: string,
  scopes: SearchScope[],
  query: string,
  skipped: Map<string, EmbedderUnavailableError>,
) {
  const wanted = new Map<string, { model: string; dimensions: number }>();
  for (const c of scopes.flatMap((s) => s.collections)) if (c.embedder) wanted.set(embedderKey(c.embedder), c.embedder);
  const entries = await Promise.all(
    [...wanted.entries()].map(async ([key, embedder]): Promise<[string, ArrayLike<number> | null]> => {
      try {
        const vector = await deps.embedQuery(tenantId, embedder.model, query);
        // A model answering in another size than the collection recorded cannot be compared with its vectors.
        return [key, vector.length === embedder.dimensions ? vector : null];
      } catch (error) {
        if (error instanceof EmbedderUnavailableError) {
          skipped.set(embedder.model, error);
          return [key, null];
        }
        throw error;
      }
    }),
  );
  return new Map(entries);
}

/** BM25 per language (collections of one language share lexemes and statistics), merged by relevance. */
async function lexicalLeg(deps: RetrievalDeps, tenantId: string, scope: SearchScope, query: string): Promise<LexicalHit[]> {
  const hits: LexicalHit[] = [];
  for (const collections of groupBy(scope.collections, (c) => c.language))
    hits.push(...(await lexicalCandidates(deps.db, { tenantId, collections, documentIds: scope.documentIds, query })));
  return hits.sort((a, b) => b.relevance - a.relevance).slice(0, LEXICAL_CANDIDATES);
}

/** kNN per embedder, merged by similarity. */
async function vectorLeg(
  deps: RetrievalDeps,
  tenantId: string,
  scope: SearchScope,
  queryVectors: Map<string, ArrayLike<number> | null>,
): Promise<VectorHit[]> {
  const hits: VectorHit[] = [];
  const withEmbedder = scope.collections.filter((c) => c.embedder);
  for (const collections of groupBy(withEmbedder, (c) => embedderKey(c.embedder!))) {
    const embedder = collections[0]!.embedder!;
    const vector = queryVectors.get(embedderKey(embedder));
    if (!vector) continue;
    const found = await vectorCandidates(deps.db, {
      tenantId,
      collectionIds: collections.map((c) => c.id),
      chunkCount: collections.reduce((sum, c) => sum + c.chunkCount, 0),
      documentIds: scope.documentIds,
      embedder: embedder.model,
      dimensions: embedder.dimensions,
      vector,
    });
    hits.push(...found);
  }
  return hits.sort((a, b) => b.similarity - a.similarity).slice(0, VECTOR_CANDIDATES);
}

async function toSnippets(deps: RetrievalDeps, tenantId: string, ranked: FusedHit[], rows: Map<string, SnippetRow>): Promise<Snippet[]> {
  if (ranked.length === 0) return [];
  await readRows(deps, tenantId, ranked, rows);
  // A chunk deleted between ranking and reading is simply left out.
  return ranked.flatMap((hit) => {
    const row = rows.get(hit.chunkId);
    return row ? [toSnippet(row, hit.score)] : [];
  });
}

function toSnippet(row: SnippetRow, score: number): Snippet {
  return {
    id: row.id,
    documentId: row.document_id,
    documentName: row.document_name,
    collectionId: row.collection_id,
    workspaceId: row.workspace_id,
    chunkIndex: row.chunk_index,
    content: row.content,
    score: Math.round(score * 10000) / 10000,
    source: {
      title: row.title,
      ...(row.heading_path.length ? { headingPath: row.heading_path } : {}),
      ...(row.page !== null ? { page: row.page } : {}),
    },
  };
}

async function emptyStatus(
  deps: RetrievalDeps,
  tenantId: string,
  scopes: SearchScope[],
  embedderUnavailable: boolean,
): Promise<RetrievalStatus> {
  let pending = false;
  let searchable = false;
  for (const scope of scopes) {
    if (scope.collections.length === 0) continue;
    const state = await retrievalRepository.scopeState(
      deps.db,
      tenantId,
      scope.collections.map((c) => c.id),
      scope.documentIds,
    );
    pending ||= state.pending;
    searchable ||= state.searchable;
  }
  if (pending) return 'indexing';
  if (!searchable) return 'no_documents';
  return embedderUnavailable ? 'embedder_unavailable' : 'no_matches';
}

function groupBy(collections: SearchCollection[], key: (c: SearchCollection) => string): SearchCollection[][] {
  const groups = new Map<string, SearchCollection[]>();
  for (const c of collections) groups.set(key(c), [...(groups.get(key(c)) ?? []), c]);
  return [...groups.values()];
}
