// What the harness reads from a search answer, whichever engine produced it.

export const MODES = ['lexical', 'vector', 'hybrid'] as const;
export type Mode = (typeof MODES)[number];

/** The fields of a POST /api/os/search snippet the benchmark looks at. */
export interface Snippet {
  documentName: string;
  chunkIndex: number;
  content: string;
  score: number;
}

export interface SearchOutcome {
  snippets: Snippet[];
  /** The retrieval the server says it ran (it may fall back, e.g. to lexical without vectors). */
  retrieval?: { mode?: string; embedder?: unknown };
  status?: string;
  ms: number;
}

/** Something that answers a query: the gateway over HTTP, or the offline baseline. */
export interface Searcher {
  name: string;
  modes: readonly Mode[];
  search(query: string, mode: Mode, topK: number): Promise<SearchOutcome>;
  close(): Promise<void>;
}
