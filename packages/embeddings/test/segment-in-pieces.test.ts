import { seededRandom } from '@memloom/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SEGMENT_PIECE_CHARS, segmentInPieces, splitIntoPieces } from '../src/segment-in-pieces.js';
import { wordVectorOf } from '../src/word-vector-embedder.js';

const words = new Intl.Segmenter('en', { granularity: 'word' });
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const plain = (segments: Iterable<Intl.SegmentData>) => Array.from(segments, ({ segment, isWordLike }) => [segment, isWordLike]);

/** Characters around which word and grapheme rules look past a neighbour, and whitespace of each kind. */
const ALPHABET = [
  ...'abcxyz019',
  ' ', ' ', ' ', '\n', '\r\n', '\t', '\u00a0', '\u3000',
  "'", '’', '.', ',', ':', '-', '_', '"', '/', '@',
  '\u0301', '\u200d', '\u00ad', '\u2060', '\ufe0f', '🏽', '🎉', '👨‍👩‍👧', '🇫🇷', '🇩', '1️⃣',
  'é', 'ß', 'Ω', 'п', 'ש', 'ا', 'ก', 'ำ', 'ກ', 'ຳ', 'ｶ', 'ﾞ', 'あ', 'カ', 'ー', '한', '中', '文',
];
const WHITESPACE = [' ', '  ', '\n', '\r\n', '\t', '\u00a0', '\u3000'];
const STARTS = [...'abz09', 'é', 'п', 'ש', 'ا', 'ก', 'ກ', 'あ', 'カ', '한', '中'];

describe('segmentInPieces', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gives every segmenter call at most SEGMENT_PIECE_CHARS characters, so a long text takes linear time', () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(1000); // 45,000 characters
    const noSpace = 'coffee/tea/'.repeat(2000); // 22,000 characters, no whitespace at all
    expect(wordVectorOf(long)).toBeDefined();
    expect(wordVectorOf(noSpace)).toBeDefined();
    const lengths = segment.mock.calls.map(([text]) => text.length);
    expect(lengths.reduce((sum, length) => sum + length, 0)).toBe(long.length + noSpace.length);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(SEGMENT_PIECE_CHARS);
  });

  it('cuts only after whitespace before a letter or digit when there is such a place, and keeps surrogate pairs whole otherwise', () => {
    const text = `${'word '.repeat(1000)}${'🎉'.repeat(3000)}`;
    const pieces = splitIntoPieces(text);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(SEGMENT_PIECE_CHARS);
      expect(piece.length).toBeGreaterThan(0);
      expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/u);
    }
    // Within the words, each piece ends at a space before a word.
    expect(pieces[0]).toMatch(/ $/u);
    expect(pieces[1]?.startsWith('word')).toBe(true);
  });

  it('never cuts before the letters that join the whitespace before them (Thai and Lao AM, halfwidth sound marks)', () => {
    for (const letter of ['\u0E33', '\u0EB3', '\uFF9E', '\uFF9F']) {
      // The one place after whitespace is before the letter; the cut made instead falls between two emoji.
      const text = `ab ${letter}🎉🎉🎉`;
      expect(plain(segmentInPieces(words, text, 6)), letter).toEqual(plain(words.segment(text)));
      expect(plain(segmentInPieces(graphemes, text, 6)), letter).toEqual(plain(graphemes.segment(text)));
    }
  });

  it('gives the words and graphemes of a single pass wherever it cut after whitespace (seeded random texts)', () => {
    const random = seededRandom(26);
    const pick = (items: readonly string[]) => items[Math.floor(random() * items.length)] as string;
    let checked = 0;
    for (let round = 0; round < 1500; round++) {
      // Stretches of any characters, each followed by whitespace and a letter or digit: places where a cut is allowed.
      const stretches = Array.from({ length: 2 + Math.floor(random() * 6) }, () => {
        const any = Array.from({ length: Math.floor(random() * 5) }, () => pick(ALPHABET)).join('');
        return `${any}${pick(WHITESPACE)}${pick(STARTS)}`;
      });
      const text = stretches.join('').normalize('NFKC');
      const pieces = splitIntoPieces(text, 8);
      // Skip texts where some cut was forced (no whitespace before a letter or digit within 8 characters).
      const forced = pieces.slice(1).some((piece, index) => !/\s$/u.test(pieces[index] as string) || !/^[\p{L}\p{N}]/u.test(piece));
      if (forced) continue;
      checked++;
      expect(plain(segmentInPieces(words, text, 8)), JSON.stringify(text)).toEqual(plain(words.segment(text)));
      expect(plain(segmentInPieces(graphemes, text, 8)), JSON.stringify(text)).toEqual(plain(graphemes.segment(text)));
    }
    expect(checked).toBeGreaterThan(500);
  });
});
