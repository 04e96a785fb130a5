// One document's bytes → its title and blocks, by media type. Runs inside the
// extraction worker (see ../extract-worker.ts), never on the request thread.
import { MEDIA_TYPES, type MediaType } from '../../documents/media-types.js';
import { decodeText } from './decode.js';
import { ExtractionError, emptyDocument, hasText, type Extraction } from './types.js';

export async function extractBlocks(bytes: Uint8Array, mediaType: MediaType, limits: { maxExpandedBytes: number }): Promise<Extraction> {
  if (bytes.byteLength === 0) throw new ExtractionError('empty', 'The file is empty (0 bytes).');
  const extraction = await byType(bytes, mediaType, limits);
  if (!hasText(extraction.blocks)) throw emptyDocument();
  return extraction;
}

// Parsers are loaded on first use of their type: pdfjs alone takes a large part of a
// second to load, and a worker that only ever sees Markdown should not pay for it.
async function byType(bytes: Uint8Array, mediaType: MediaType, limits: { maxExpandedBytes: number }): Promise<Extraction> {
  switch (mediaType) {
    case MEDIA_TYPES.pdf:
      return (await import('./pdf.js')).extractPdf(bytes, limits.maxExpandedBytes);
    case MEDIA_TYPES.docx:
      return (await import('./docx.js')).extractDocx(bytes, limits.maxExpandedBytes);
    case MEDIA_TYPES.html:
      return (await import('./html.js')).extractHtml(decodeText(bytes));
    case MEDIA_TYPES.markdown:
      return (await import('./markdown.js')).extractMarkdown(decodeText(bytes));
    case MEDIA_TYPES.csv:
      return (await import('./csv.js')).extractCsv(decodeText(bytes));
    case MEDIA_TYPES.json:
      return (await import('./json.js')).extractJson(decodeText(bytes));
    case MEDIA_TYPES.text:
      return (await import('./text.js')).extractText(decodeText(bytes));
    default:
      throw new ExtractionError('unsupported', `Documents of type ${mediaType as string} cannot be extracted.`);
  }
}
