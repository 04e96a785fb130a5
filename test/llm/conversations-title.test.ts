// A new conversation's title (conversations/title.ts): the first non-blank line,
// one line of plain text, at most 80 characters, cut at a word with an ellipsis.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { titleFrom, TITLE_CHARS } from '../../src/areas/llm/conversations/title.js';

describe('conversation titles', () => {
  it('takes the first non-blank line, trimmed, as it is when it fits', () => {
    assert.equal(titleFrom('Hello there'), 'Hello there');
    assert.equal(titleFrom('\n \r\n\t  Plan my week  \nwith details'), 'Plan my week');
    const exact = 'x'.repeat(TITLE_CHARS);
    assert.equal(titleFrom(exact), exact);
  });

  it('cuts a long line at a word, ellipsis included in the 80 characters', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau';
    const title = titleFrom(words);
    assert.ok([...title].length <= TITLE_CHARS, title);
    assert.ok(title.endsWith('…'));
    assert.ok(words.startsWith(title.slice(0, -1)), 'a prefix of the line');
    assert.ok(words[title.length - 1] === ' ', 'cut where a word ends');
    // A word ending exactly at the limit is kept whole.
    const fits = `${'a'.repeat(TITLE_CHARS - 1)} tail`;
    assert.equal(titleFrom(fits), `${'a'.repeat(TITLE_CHARS - 1)}…`);
  });

  it('cuts one long word inside it rather than leave nothing', () => {
    const url = `https://example.com/${'p'.repeat(200)}`;
    const title = titleFrom(url);
    assert.equal([...title].length, TITLE_CHARS);
    assert.equal(title, `${url.slice(0, TITLE_CHARS - 1)}…`);
  });

  it('makes one line of plain text: control characters and runs of white space become one space', () => {
    assert.equal(titleFrom('tab\there\u0007bell   spaces\u0085next'), 'tab here bell spaces next');
  });

  it('never splits a character made of two UTF-16 units', () => {
    const title = titleFrom('😀'.repeat(100));
    assert.equal([...title].length, TITLE_CHARS);
    assert.doesNotMatch(title, LONE_SURROGATE);
    // Only the beginning of a long line is read: here that beginning ends inside a pair.
    assert.equal(titleFrom(`a${' '.repeat(638)}😀 and more`), 'a');
  });
});

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
