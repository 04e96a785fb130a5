// Word handling shared by the data-set lint and the offline BM25 baseline: one
// tokenizer, one stop-word list and one deliberately crude stemmer, so "shares a
// word" means the same thing to the lint that checks the questions and to the
// baseline that ranks passages.

/** Collapses runs of whitespace and unifies typographic quotes, for substring matching. */
export function normalizeText(text: string): string {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

// Function words, question words and words every policy text uses; none of them
// makes a question findable, so none counts as shared vocabulary.
const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being below between both but by
  can cannot could couldn't did didn't do does doesn't doing don't down during each either else ever every few for from further get gets
  got had has have having he her here hers herself him himself his how i if in into is isn't it it's its itself just let may me might
  more most must my myself need needs no nor not now of off on once one only or other ought our ours ourselves out over own per same
  shall she should so some such than that the their theirs them themselves then there these they this those through to too under until
  up upon us very was we were what when where whether which while who whom whose why will with within without would you your yours
  yourself yourselves many much someone something anyone anything thing things kind way ways there's what's`.split(/\s+/),
);

/** A crude suffix stripper: enough to make "leave", "leaves" and "leaving" one word. */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '');
  if (/^\d/.test(w)) return w;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  for (const suffix of ['ingly', 'edly', 'ing', 'ed', 'ly', 'ment', 'ness', 'ation', 'ions', 'ion', 'er', 'est']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('y')) w = `${w.slice(0, -1)}i`;
  // Doubled final consonants ("planned" → "plann") fold to one.
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** Lower-cased word tokens (letters, digits, inner apostrophes and dots in numbers). */
export function tokenize(text: string): string[] {
  return (
    normalizeText(text)
      .toLowerCase()
      .match(/[a-z0-9]+(?:['.][a-z0-9]+)*/g) ?? []
  );
}

/** The stems of the words that carry meaning: no stop words, no single letters. */
export function contentStems(text: string): string[] {
  return tokenize(text)
    .filter((token) => !STOP_WORDS.has(token) && (token.length > 1 || /\d/.test(token)))
    .map(stem);
}
