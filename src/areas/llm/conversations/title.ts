// A new conversation's title, from its first message: what a list of conversations
// shows before the user names one (PATCH). The message is verbatim text; a title is
// one line, so control characters and runs of white space become single spaces.

export const TITLE_CHARS = 80;
const ELLIPSIS = '…';
// A title needs only the line's beginning: this many UTF-16 units hold 80 characters of any ordinary line.
const SCANNED_CHARS = 8 * TITLE_CHARS;

/** The first non-blank line, trimmed, cut at a word to at most 80 characters (ellipsis included). */
export function titleFrom(message: string): string {
  // The first non-blank character starts the first non-blank line; a title needs only its beginning.
  const start = message.search(/\S/);
  if (start < 0) return '';
  const breakAt = message.slice(start, start + SCANNED_CHARS).search(/[\r\n]/);
  // A slice may end inside a surrogate pair: its lone half is dropped.
  const line = message.slice(start, breakAt < 0 ? start + SCANNED_CHARS : start + breakAt).replace(/[\uD800-\uDBFF]$/, '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const clean = line.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
  // Code points, not UTF-16 units: a cut never splits an emoji's surrogate pair.
  const chars = Array.from(clean);
  if (chars.length <= TITLE_CHARS) return clean;
  const head = chars.slice(0, TITLE_CHARS - 1).join(''); // and the ellipsis
  // The head ends at a word when the next character is a space; else back to the last space.
  const atWord = chars[TITLE_CHARS - 1] === ' ' ? head.length : head.lastIndexOf(' ');
  // One long word (a URL, a hash): cut inside it rather than leave nothing.
  const cut = atWord > 0 ? head.slice(0, atWord) : head;
  return `${cut.trimEnd()}${ELLIPSIS}`;
}
