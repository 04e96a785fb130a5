// `--offline`: a small in-process BM25 over the corpus, so the harness, the data-set
// lint and the metrics can run before (or without) the gateway's search. Chunks
// are paragraphs of the markdown (with the heading path in front, as the real
// chunker puts it into the ranking) and rows of a CSV (each with its header).
import type { CorpusFile } from './dataset.js';
import { contentStems } from './text.js';
import type { Snippet } from './types.js';

interface Chunk {
  documentName: string;
  chunkIndex: number;
  content: string;
  /** Stem → count, over heading path and content. */
  terms: Map<string, number>;
  length: number;
}

function counted(stems: string[]): Map<string, number> {
  const terms = new Map<string, number>();
  for (const s of stems) terms.set(s, (terms.get(s) ?? 0) + 1);
  return terms;
}

function markdownChunks(file: CorpusFile): { heading: string; content: string }[] {
  const pieces: { heading: string; content: string }[] = [];
  const path: string[] = [];
  for (const block of file.text.split(/\n\s*\n/)) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(block.trim());
    if (heading && !block.trim().includes('\n')) {
      path.splice(heading[1]!.length - 1);
      path[heading[1]!.length - 1] = heading[2]!;
      continue;
    }
    if (block.trim()) pieces.push({ heading: path.filter(Boolean).join(' > '), content: block.trim() });
  }
  return pieces;
}

function csvChunks(file: CorpusFile): { heading: string; content: string }[] {
  const [header, ...rows] = file.text.split('\n').filter((line) => line.trim());
  return rows.map((row) => ({ heading: '', content: `${header}\n${row}` }));
}

export class Bm25Index {
  private readonly chunks: Chunk[] = [];
  private readonly documentFrequency = new Map<string, number>();
  private averageLength = 0;

  constructor(
    corpus: CorpusFile[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    for (const file of corpus) {
      const title = file.name.replace(/\.[a-z]+$/, '').replace(/-/g, ' ');
      const pieces = file.name.endsWith('.csv') ? csvChunks(file) : markdownChunks(file);
      pieces.forEach((piece, chunkIndex) => {
        const stems = contentStems(`${title} ${piece.heading} ${piece.content}`);
        this.chunks.push({ documentName: file.name, chunkIndex, content: piece.content, terms: counted(stems), length: stems.length });
      });
    }
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
    const scored: { chunk: Chunk; score: number }[] = [];
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
