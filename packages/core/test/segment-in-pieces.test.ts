import { afterEach, describe, expect, it, vi } from 'vitest';
import { keywords, MemloomError, SEGMENT_PIECE_CHARS, segmentInPieces, tokenize } from '../src/index.js';
import { isSafeCut, splitIntoPieces } from '../src/text/segment-in-pieces.js';
import { seededRandom } from '../src/testing/index.js';

const words = new Intl.Segmenter('en', { granularity: 'word' });
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const plain = (segments: Iterable<Intl.SegmentData>) => Array.from(segments, ({ segment, isWordLike }) => `${segment}\u0000${String(isWordLike)}`);

/** Pieces of text where segmentation gets subtle, script by script. */
const CHUNKS = [
  // English: marks inside words, and words around them.
  "isn't", 'can’t', '3.14', '1,000', 'e.g', 'U.S.A', 'a_b', '__init__', 'a:b', 'x;y', 'rock', 'the', '2024', 'coffee', 'café',
  // Chinese (with and without punctuation), Japanese, Korean.
  '我住在杭州西湖附近', '每天早上喝一杯拿铁咖啡', '小橘', '周末', '東京の友達', 'コーヒー', 'ひらがな', 'ｺｰﾋｰ', '한국어', '々',
  // Emoji: ZWJ sequences, skin tones, flags, keycaps, lone joiners and selectors.
  '👨‍👩‍👧', '👍🏽', '🏽', '🇫🇷', '🇫', '1️⃣', '🎉', '\u200d', '\ufe0f',
  // Hebrew and its quotes, Arabic, Armenian: marks that are letters to the word rules.
  'שלום', 'צה"ל', "ג'", 'ש״ס', '׳', 'العربية', '٫', '٣', 'Հայ՚', '֊',
  // Thai, Lao, Tai Tham (broken by dictionary), and the letters that join what precedes them.
  'ภาษาไทย', 'น้ำ', 'ำ', 'ກາ', 'ຳ', 'ᨠᩥ', '᪠', 'ﾞ', 'ﾟ',
  // Combining marks and Indic clusters.
  'e\u0301', '\u0301', '\u0308', 'क्ष', 'ि', 'a\u00ad',
];
/** What goes between chunks: nothing, whitespace of each kind, and punctuation that does and does not join words. */
const SEPARATORS = [
  '', '', '', '', ' ', ' ', '  ', '\n', '\r\n', '\t', '\u00a0', '\u202f', '\ufeff', '\u3000', '\u2028',
  '.', ',', ':', ';', "'", '’', '"', '_', '‿', '-', '/', '!', '?', '(', ')', '@', '#', '·', '־', '…', '—', '«', '¿',
  '，', '。', '、', '：', '；', '！', '？', '「', '」',
];

/** A seeded text of `chunkCount` chunks with separators between them, half of them NFKC-normalized (as every caller segments). */
function randomText(random: () => number, chunkCount: number): string {
  const pick = (items: readonly string[]) => items[Math.floor(random() * items.length)] as string;
  let text = '';
  for (let index = 0; index < chunkCount; index++) text += pick(CHUNKS) + pick(SEPARATORS);
  return random() < 0.5 ? text.normalize('NFKC') : text;
}

describe('isSafeCut', () => {
  it('accepts only places where a single pass breaks both words and graphemes, whatever the text around (seeded random texts)', () => {
    const random = seededRandom(27);
    const kinds = { whitespace: 0, punctuation: 0, markBeforeHan: 0 };
    for (let round = 0; round < 300; round++) {
      const text = randomText(random, 10 + Math.floor(random() * 40));
      const whole = [plain(words.segment(text)), plain(graphemes.segment(text))];
      for (let at = 1; at < text.length; at++) {
        if (!isSafeCut(text, at)) continue;
        const [before, after] = [text.slice(0, at), text.slice(at)];
        expect([...plain(words.segment(before)), ...plain(words.segment(after))], `${JSON.stringify(text)} at ${at}`).toEqual(whole[0]);
        expect([...plain(graphemes.segment(before)), ...plain(graphemes.segment(after))], `${JSON.stringify(text)} at ${at}`).toEqual(whole[1]);
        if (/\s/u.test(text[at - 1] as string)) kinds.whitespace++;
        else if (/[.,:;'"]/u.test(text[at - 1] as string)) kinds.markBeforeHan++;
        else kinds.punctuation++;
      }
    }
    // Each kind of place was tried many times.
    expect(kinds.whitespace).toBeGreaterThan(1000);
    expect(kinds.punctuation).toBeGreaterThan(1000);
    expect(kinds.markBeforeHan).toBeGreaterThan(100);
  }, 60_000);

  it('accepts a place after any punctuation or whitespace character only where a single pass breaks there, between letters and digits', () => {
    const marks: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const mark = String.fromCodePoint(code);
      if (/[\s\p{P}]/u.test(mark)) marks.push(mark);
    }
    expect(marks.length).toBeGreaterThan(800);
    // Letters and digits of the kinds the word rules tell apart: Latin, digits, Han, Hebrew (its quotes), Katakana.
    const lettersAndDigits = ['a', '1', '中', 'א', 'ア'];
    const wrong: string[] = [];
    let safe = 0;
    for (const mark of marks) {
      for (const before of lettersAndDigits) {
        for (const next of lettersAndDigits) {
          for (const rest of ['', 'a']) {
            const text = before + mark + next + rest;
            const at = before.length + mark.length;
            if (!isSafeCut(text, at)) continue;
            safe++;
            const [head, tail] = [text.slice(0, at), text.slice(at)];
            const pieces = [...plain(words.segment(head)), ...plain(words.segment(tail))];
            const graphemePieces = [...plain(graphemes.segment(head)), ...plain(graphemes.segment(tail))];
            if (pieces.join() !== plain(words.segment(text)).join() || graphemePieces.join() !== plain(graphemes.segment(text)).join()) wrong.push(text);
          }
        }
      }
    }
    // The Greek question mark (U+037E) joins digits as ; does (1;1).
    expect(isSafeCut('1\u037E1', 2)).toBe(false);
    expect(wrong).toEqual([]);
    expect(safe).toBeGreaterThan(marks.length * 10);
  }, 30_000);

  it('refuses places after marks inside words and before joining letters, and accepts places between words and after Chinese punctuation', () => {
    const inside = ["isn'|t", 'can’|t', '3.|14', '1,|000', 'e.|g', 'a_|b', 'a:|b', 'x;|y', 'צה"|ל', 'ש״|ס', 'a\u202f|b', 'a\ufeff|b', 'Հ՚|այ', 'a·|b', 'ab|cd', 'ab |\u0301', '🎉|🎉', 'x |\u0e33', 'x !|\uff9e'];
    for (const marked of inside) {
      const at = marked.indexOf('|');
      const text = marked.replace('|', '');
      expect(isSafeCut(text, at), marked).toBe(false);
    }
    const between = ['a |b', 'a!|b', 'a-|b', 'a/|b', '中。|中', '中，|中', '中、|文', '中：|文', '中；|文', '中!|文', 'a,|中', "a'|あ", '3.|カ', '🎉 |a'];
    for (const marked of between) expect(isSafeCut(marked.replace('|', ''), marked.indexOf('|')), marked).toBe(true);
  });
});

describe('segmentInPieces', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gives the words and graphemes of a single pass whenever every cut was a safe place (seeded random texts, small pieces)', () => {
    const random = seededRandom(2027);
    let checked = 0;
    let forced = 0;
    for (let round = 0; round < 300; round++) {
      const text = randomText(random, 40 + Math.floor(random() * 160));
      const pieceChars = 40 + Math.floor(random() * 160);
      const pieces = splitIntoPieces(text, pieceChars);
      expect(pieces.join('')).toBe(text);
      let at = 0;
      const cuts = pieces.slice(0, -1).map((piece) => (at += piece.length));
      if (!cuts.every((cut) => isSafeCut(text, cut))) {
        forced++;
        continue;
      }
      checked++;
      expect(plain(segmentInPieces(words, text, pieceChars)), JSON.stringify(text)).toEqual(plain(words.segment(text)));
      expect(plain(segmentInPieces(graphemes, text, pieceChars)), JSON.stringify(text)).toEqual(plain(graphemes.segment(text)));
    }
    expect(checked).toBeGreaterThan(200);
    expect(forced).toBeLessThan(checked);
  }, 60_000);

  it('cuts Chinese at its punctuation (，。！？、：；), not between two characters', () => {
    const sentence = '我住在杭州西湖附近每天早上喝一杯拿铁咖啡';
    for (const mark of ['，', '。', '！', '？', '、', '：', '；']) {
      // As written, and as callers segment it (NFKC turns ，！？：； into , ! ? : ;).
      for (const ending of [mark, mark.normalize('NFKC')]) {
        const text = `${sentence}${ending}`.repeat(20);
        const pieces = splitIntoPieces(text, 100);
        expect(pieces.length, ending).toBeGreaterThan(4);
        for (const piece of pieces.slice(0, -1)) expect(piece.endsWith(`${sentence}${ending}`), ending).toBe(true);
        expect(plain(segmentInPieces(words, text, 100)), ending).toEqual(plain(words.segment(text)));
      }
    }
  });

  it('gives every segmenter call at most SEGMENT_PIECE_CHARS characters, so tokenize and keywords take linear time on long text', () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    const long = 'The quick brown fox isn’t lazy. 我住在杭州，每天喝咖啡。'.repeat(1000); // 44,000 characters
    const noPlace = 'coffee.tea.'.repeat(2000); // 22,000 characters, no safe place at all
    for (const text of [long, noPlace]) {
      expect(tokenize(text).length).toBeGreaterThan(0);
      expect(keywords(text).length).toBeGreaterThan(0);
    }
    const lengths = segment.mock.calls.map(([text]) => text.length);
    expect(lengths.reduce((sum, length) => sum + length, 0)).toBe(2 * (long.length + noPlace.length));
    expect(Math.max(...lengths)).toBeLessThanOrEqual(SEGMENT_PIECE_CHARS);
  });

  it('keeps UTF-16 pairs whole where it must cut between code points', () => {
    const text = `${'word '.repeat(1000)}${'🎉'.repeat(3000)}${'x'}${'𐐀'.repeat(1500)}`;
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
    // The same with the smallest piece that holds a pair.
    expect(splitIntoPieces('🎉🎉𐐀', 2)).toEqual(['🎉', '🎉', '𐐀']);
  });

  it('refuses a piece size that cannot hold a UTF-16 pair', () => {
    for (const pieceChars of [0, 1, 1.5, Number.NaN, -3]) {
      expect(() => Array.from(segmentInPieces(words, 'some text', pieceChars)), String(pieceChars)).toThrow(MemloomError);
    }
  });
});
