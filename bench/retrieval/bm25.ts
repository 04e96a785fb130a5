// The plain BM25 reference (k1 1.2, b 0.75, no thresholds, no expansion): what a
// textbook search engine does with the same chunks the gateway made, read back
// through GET /api/os/documents/{id}/chunks, so the gateway's own ranking is
// compared with it in the same run. `--offline` builds it over paragraphs of the
// corpus instead, to check the data and the harness without the gateway.
import type { CorpusFile } from './dataset.js';
import { contentStems } from './text.js';
import type { Snippet } from './types.js';

export interface ReferenceChunk {
  /** The gateway's chunk id (absent offline). */
  id?: string;
  documentName: string;
  chunkIndex: number;
  content: string;
  /** Title and heading path: indexed with the content, as any search engine would. */
  context: string;
}

interface Indexed extends ReferenceChunk {
  terms: Map<string, number>;
  length: number;
}

function counted(stems: string[]): Map<string, number> {
  const terms = new Map<string, number>();
  for (const s of stems) terms.set(s, (terms.get(s) ?? 0) + 1);
  return terms;
}

/** Paragraphs of each file with its heading path (rows of a CSV with their header): the offline chunks. */
export function paragraphChunks(corpus: CorpusFile[]): ReferenceChunk[] {
  return corpus.flatMap((file) => {
    const title = file.name.replace(/\.[a-z]+$/, '').replace(/-/g, ' ');
    if (file.name.endsWith('.csv')) {
      const [header, ...rows] = file.text.split('\n').filter((line) => line.trim());
      return rows.map((row, chunkIndex) => ({ documentName: file.name, chunkIndex, content: `${header}\n${row}`, context: title }));
    }
    const path: string[] = [];
    const pieces: ReferenceChunk[] = [];
    for (const block of file.text.split(/\n\s*\n/)) {
      const heading = /^(#{1,6})\s+(.*)$/.exec(block.trim());
      if (heading && !block.trim().includes('\n')) {
        path.splice(heading[1]!.length - 1);
        path[heading[1]!.length - 1] = heading[2]!;
      } else if (block.trim())
        pieces.push({ documentName: file.name, chunkIndex: pieces.length, content: block.trim(), context: `${title} ${path.join(' ')}` });
    }
    return pieces;
  });
}

export class Bm25Index {
  private readonly chunks: Indexed[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(
    chunks: ReferenceChunk[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.chunks = chunks.map((chunk) => {
      const stems = contentStems(`${chunk.context} ${chunk.content}`);
      return { ...chunk, terms: counted(stems), length: stems.length };
    });
    for (const chunk of this.chunks)
      for (const term of chunk.terms.keys()) this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
    this.averageLength = this.chunks.reduce((sum, c) => sum + c.length, 0) / Math.max(1, this.chunks.length);
  }

  get size(): number {
    return this.chunks.length;
  }

  search(query: string, topK: number): Snippet[] {
    const terms = [...new Set(contentStems(query))];
    const n = this.chunks.length;
    const scored: { chunk: Indexed; score: number }[] = [];
    for (const chunk of this.chunks) {
      let score = 0;
      for (const term of terms) {
        const tf = chunk.terms.get(term);
        if (!tf) continue;
        const df = this.documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * chunk.length) / this.averageLength));
      }
      if (score > 0) scored.push({ chunk, score });
    }
    scored.sort((x, y) => y.score - x.score);
    return scored.slice(0, topK).map(({ chunk, score }) => ({
      documentName: chunk.documentName,
      chunkIndex: chunk.chunkIndex,
      content: chunk.content,
      score,
    }));
  }
}
