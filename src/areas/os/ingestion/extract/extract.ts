// One document's bytes → its title and blocks, by media type. Runs inside the
// extraction worker (see ../extract-worker.ts), never on the request thread.
import { MEDIA_TYPES, type MediaType } from '../../documents/media-types.js';
import { extractCsv } from './csv.js';
import { decodeText } from './decode.js';
import { extractDocx } from './docx.js';
import { extractHtml } from './html.js';
import { extractJson } from './json.js';
import { extractMarkdown } from './markdown.js';
import { extractPdf } from './pdf.js';
import { extractText } from './text.js';
import { ExtractionError, emptyDocument, hasText, type Extraction } from './types.js';

export async function extractBlocks(bytes: Uint8Array, mediaType: MediaType, limits: { maxExpandedBytes: number }): Promise<Extraction> {
  if (bytes.byteLength === 0) throw new ExtractionError('empty', 'The file is empty (0 bytes).');
  const extraction = await byType(bytes, mediaType, limits);
  if (!hasText(extraction.blocks)) throw emptyDocument();
  return extraction;
}

function byType(bytes: Uint8Array, mediaType: MediaType, limits: { maxExpandedBytes: number }): Extraction | Promise<Extraction> {
  switch (mediaType) {
    case MEDIA_TYPES.pdf:
      return extractPdf(bytes, limits.maxExpandedBytes);
    case MEDIA_TYPES.docx:
      return extractDocx(bytes, limits.maxExpandedBytes);
    case MEDIA_TYPES.html:
      return extractHtml(decodeText(bytes));
    case MEDIA_TYPES.markdown:
      return extractMarkdown(decodeText(bytes));
    case MEDIA_TYPES.csv:
      return extractCsv(decodeText(bytes));
    case MEDIA_TYPES.json:
      return extractJson(decodeText(bytes));
    case MEDIA_TYPES.text:
      return extractText(decodeText(bytes));
    default:
      throw new ExtractionError('unsupported', `Documents of type ${mediaType as string} cannot be extracted.`);
  }
}
