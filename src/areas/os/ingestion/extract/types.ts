// What every extractor produces: the document's structure as a flat list of blocks,
// which chunking.ts packs into chunks. Plain data only, so it crosses the worker boundary.

/** Where a block sits in a paged document (PDF); null for the rest. */
export type Page = number | null;

export type Block =
  | { kind: 'heading'; level: number; text: string; page: Page }
  | { kind: 'paragraph'; text: string; page: Page }
  /** One list item; `marker` is what is printed before it ("-", "1."), `depth` its nesting (0 at the top). */
  | { kind: 'item'; text: string; marker: string; depth: number; page: Page }
  /** Code, preformatted text, flattened JSON: split between lines, never by sentence. */
  | { kind: 'preformatted'; text: string; page: Page }
  /** `header` holds the header row(s) every piece of the table repeats; may be empty. */
  | { kind: 'table'; header: string[][]; rows: string[][]; page: Page };

export interface Extraction {
  /** The document's own title (PDF Title, HTML <title>, first H1), if it has one. */
  title: string | null;
  blocks: Block[];
}

export type ExtractionCode = 'malformed' | 'empty' | 'too_large' | 'timeout' | 'out_of_memory' | 'unsupported' | 'crashed';

/**
 * Why a document yields no chunks. `permanent`: trying the same bytes again would
 * fail the same way (every code but an unexpected worker crash), so the job should
 * be marked failed rather than retried.
 */
export class ExtractionError extends Error {
  override readonly name = 'ExtractionError';
  readonly permanent: boolean;
  constructor(
    readonly code: ExtractionCode,
    message: string,
    permanent = code !== 'crashed',
  ) {
    super(message);
    this.permanent = permanent;
  }
}

/** A document with nothing to index. */
export const emptyDocument = (what = 'The document'): ExtractionError => new ExtractionError('empty', `${what} contains no text.`);

/** True when at least one block holds some text. */
export function hasText(blocks: Block[]): boolean {
  return blocks.some((b) => (b.kind === 'table' ? b.rows.length + b.header.length > 0 : b.text.trim() !== ''));
}
