// Bytes → text for the text formats. Uploads come from anywhere: honour a byte-order
// mark, expect UTF-8, and fall back to Windows-1252 (what "ANSI" files from office
// tools are) when the bytes are not UTF-8, rather than indexing replacement characters.
import { ExtractionError } from './types.js';

export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes);
  }
  // A NUL in "text" means a binary file under a text name; indexing it would be noise.
  if (text.includes('\u0000')) throw new ExtractionError('malformed', 'The file is binary, not text.');
  return text.replace(/\r\n?/g, '\n');
}

/** Collapses runs of whitespace (layout, not meaning) into single spaces. */
export const squash = (text: string): string => text.replace(/\s+/g, ' ').trim();
