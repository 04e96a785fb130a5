// A DOCX is a zip, and a zip can declare (or hide) an expansion far beyond its size:
// a few kilobytes of DEFLATE inflate to gigabytes. Before any zip library opens it,
// its central directory is read here and the declared sizes checked; then every entry
// is inflated once as a stream and counted, so an archive that lies about its sizes
// is caught too, without holding the inflated bytes.
import { createInflateRaw } from 'node:zlib';
import { ExtractionError } from './types.js';

export interface ZipLimits {
  /** The most all entries together may inflate to. */
  maxExpandedBytes: number;
  /** Entries in one archive (a DOCX has a few dozen). */
  maxEntries?: number;
  /** Inflated/compressed ratio beyond which an entry of over 1 MiB is a bomb (XML compresses ~10–30×). */
  maxRatio?: number;
}

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeader: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const ZIP64_MARK = 0xffffffff;

/** Reads the central directory; throws 'malformed' when there is none (a truncated or non-zip file). */
export function readCentralDirectory(zip: Uint8Array): Entry[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // The End Of Central Directory record is 22 bytes plus a comment of up to 64 KiB, at the very end.
  let eocd = -1;
  for (let i = zip.byteLength - 22; i >= Math.max(0, zip.byteLength - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0)
    throw new ExtractionError('malformed', 'The file is not a complete zip archive (a DOCX is one): it has no central directory.');
  const count = view.getUint16(eocd + 10, true);
  const directorySize = view.getUint32(eocd + 12, true);
  const directoryOffset = view.getUint32(eocd + 16, true);
  if (count === 0xffff || directoryOffset === ZIP64_MARK)
    throw new ExtractionError('too_large', 'The archive is a ZIP64 archive, far larger than any document.');
  if (directoryOffset + directorySize > eocd) throw new ExtractionError('malformed', 'The zip archive is truncated.');
  const entries: Entry[] = [];
  let at = directoryOffset;
  for (let n = 0; n < count; n++) {
    if (at + 46 > eocd || view.getUint32(at, true) !== CENTRAL_SIGNATURE)
      throw new ExtractionError('malformed', 'The zip central directory is damaged.');
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    entries.push({
      name: Buffer.from(zip.buffer, zip.byteOffset + at + 46, nameLength).toString('utf8'),
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localHeader: view.getUint32(at + 42, true),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Refuses ('too_large') an archive whose entries would expand beyond the limits, declared or actual. */
export async function checkZipExpansion(zip: Uint8Array, limits: ZipLimits): Promise<void> {
  const { maxExpandedBytes, maxEntries = 10_000, maxRatio = 200 } = limits;
  const entries = readCentralDirectory(zip);
  if (entries.length > maxEntries)
    throw new ExtractionError('too_large', `The archive holds ${entries.length} entries (at most ${maxEntries}).`);
  let declared = 0;
  for (const entry of entries) {
    if (entry.size === ZIP64_MARK || entry.compressedSize === ZIP64_MARK)
      throw new ExtractionError('too_large', `${entry.name} is a ZIP64 entry.`);
    declared += entry.size;
    if (entry.size > 1024 ** 2 && entry.size / Math.max(1, entry.compressedSize) > maxRatio) {
      throw new ExtractionError(
        'too_large',
        `${entry.name} would expand ${Math.round(entry.size / Math.max(1, entry.compressedSize))}× (a zip bomb).`,
      );
    }
  }
  if (declared > maxExpandedBytes) {
    throw new ExtractionError('too_large', `The archive would expand to ${declared} bytes (at most ${maxExpandedBytes}).`);
  }
  // The sizes above are what the archive claims; this is what it does.
  let inflated = 0;
  for (const entry of entries) inflated += await inflatedSize(zip, entry, maxExpandedBytes - inflated);
}

/** Inflates one entry as a stream, counting bytes and keeping none; stops once past `budget`. */
async function inflatedSize(zip: Uint8Array, entry: Entry, budget: number): Promise<number> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const at = entry.localHeader;
  if (at + 30 > zip.byteLength || view.getUint32(at, true) !== LOCAL_SIGNATURE)
    throw new ExtractionError('malformed', `The zip entry ${entry.name} is damaged.`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const data = zip.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) {
    if (data.byteLength > budget) throw new ExtractionError('too_large', 'The archive expands beyond the limit.');
    return data.byteLength;
  }
  if (entry.method !== 8) throw new ExtractionError('unsupported', `The zip entry ${entry.name} uses compression method ${entry.method}.`);
  return new Promise<number>((resolve, reject) => {
    let total = 0;
    const inflate = createInflateRaw();
    inflate.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > budget) {
        inflate.destroy();
        reject(new ExtractionError('too_large', `The archive expands beyond ${budget} bytes (its ${entry.name} lies about its size).`));
      }
    });
    inflate.on('error', () => reject(new ExtractionError('malformed', `The zip entry ${entry.name} does not inflate.`)));
    inflate.on('end', () => resolve(total));
    inflate.end(data);
  });
}
