import { describe, expect, it } from 'vitest';
import { seededRandom } from '../src/testing/index.js';
import { clipGraphemes, firstGraphemes } from '../src/text/graphemes.js';

// The cuts as the segmenter alone makes them: the shortcut for texts of one-unit graphemes must agree.
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const starts = (text: string) => Array.from(segmenter.segment(text), (part) => part.index);

// One-unit graphemes, and what joins a neighbour: CR LF, combining marks (U+0301, the CJK tone mark U+302A,
// the half-width voiced mark U+FF9E), a joiner, a variation selector, flags, Hangul jamo, a surrogate pair.
const PIECES = ['a', 'Z', ' ', '.', '\t', '\n', '\r', '中', '。', '，', '１', 'é', '\u0301', '\u302a', '\uff9e', '\u200d', '\ufe0f', '👨', '🇨', '🇳', '가', '\u1161', 'ｱ'];

describe('firstGraphemes and clipGraphemes', () => {
  it('cut where the segmenter cuts, for texts of one-unit graphemes and texts with marks, joiners, flags and CR LF', () => {
    const random = seededRandom(35);
    for (let round = 0; round < 3000; round++) {
      const simple = round % 2 === 0;
      const length = Math.floor(random() * 24);
      let text = '';
      for (let index = 0; index < length; index++) {
        // Half the texts are mostly one-unit graphemes, each unit another piece one time in ten (the shortcut must not be taken past it).
        const piece = simple && random() < 0.9 ? (PIECES[Math.floor(random() * 11)] as string) : (PIECES[Math.floor(random() * PIECES.length)] as string);
        text += piece === '\r' && simple ? 'b' : piece;
      }
      const at = starts(text);
      const counts = Array.from({ length: 22 }, (_, index) => index + 1);
      expect(
        counts.map((count) => [firstGraphemes(text, count), clipGraphemes(text, count)]),
        JSON.stringify(text),
      ).toEqual(counts.map((count) => (at.length <= count ? [text, text] : [text.slice(0, at[count]), `${text.slice(0, at[count - 1])}…`])));
    }
  }, 30_000);

  it('keep a mark, a joiner or a line feed with what it follows at the cut', () => {
    expect(firstGraphemes('abcde\u0301f', 5)).toBe('abcde\u0301');
    expect(firstGraphemes('中文字\u302a好', 3)).toBe('中文字\u302a');
    expect(firstGraphemes('abc\r\nd', 4)).toBe('abc\r\n');
    expect(clipGraphemes('abcde\u0301fg', 5)).toBe('abcd…');
    expect(clipGraphemes('我在北京工作。目前', 5)).toBe('我在北京…');
  });
});
