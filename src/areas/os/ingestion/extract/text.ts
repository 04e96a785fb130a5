// Plain text: paragraphs are separated by blank lines; line breaks inside one are kept
// (addresses, verse, hard-wrapped mail all read better with them).
import type { Extraction } from './types.js';

export function extractText(text: string): Extraction {
  const blocks = text
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/[ \t]+$/gm, '').trim())
    .filter((p) => p !== '')
    .map((p) => ({ kind: 'paragraph' as const, text: p, page: null }));
  return { title: null, blocks };
}
