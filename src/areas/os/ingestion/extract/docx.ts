// DOCX: mammoth maps Word's paragraph styles to HTML (Heading 1 → h1, lists, tables),
// and the HTML path turns that into blocks, so both formats chunk the same way.
// The zip is checked for its expansion before mammoth inflates anything.
import { extractHtml } from './html.js';
import type { Extraction } from './types.js';
import { checkZipExpansion } from './zip-guard.js';
import { ExtractionError } from './types.js';

export async function extractDocx(bytes: Uint8Array, maxExpandedBytes: number): Promise<Extraction> {
  await checkZipExpansion(bytes, { maxExpandedBytes });
  // Loaded here, not at the top: most workers never see a DOCX, and mammoth takes a while to load.
  const { default: mammoth } = await import('mammoth');
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      // Images would arrive as base64 data URIs: megabytes of heap for nothing we index.
      // A DOCX may link files by path; reading them would expose the server's disk.
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })), externalFileAccess: false },
    );
    html = result.value;
  } catch (error) {
    throw new ExtractionError('malformed', `The file is not a readable DOCX (${(error as Error).message}).`);
  }
  return extractHtml(html);
}
