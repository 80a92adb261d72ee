import { describe, expect, it } from 'vitest';
import { keywords, porterStem, tokenize } from '../src/index.js';
import { plainAsciiWords } from '../src/text/ascii-words.js';
import { seededRandom } from '../src/testing/index.js';
import { referenceKeywords, referenceTokenize, segmenterWords } from './reference-text.js';

/** Texts of every kind the tokenizer meets, and the marks where segmentation gets subtle. */
const CORPUS = [
  '',
  '   ',
  'I drink espresso every morning',
  'I drink espresso every morning.',
  "Caroline's going to the LGBTQ support groups",
  'Caroline’s going to the LGBTQ support groups',
  "I can't stand it; don't ask, won't tell: that's it.",
  'rock ’n’ roll, the ’90s and the 1990s',
  'It costs $3.14, or 1,000 yen; version 2.0.1 shipped on 2024-01-05 at 10:30.',
  'e.g. U.S.A. i.e. Ph.D. a.m.',
  'Call +1 (555) 010-9999 or mail ana@example.com, see https://example.com/a_b?x=1&y=2#top',
  'snake_case and __dunder__ and trailing_ and _leading',
  'tabs\tand\nnewlines\r\nand\u000bvertical\u000cfeeds',
  'control\u0001chars\u007fhere',
  '"quoted" \'single\' `back` (paren) [bracket] {brace} <angle>',
  'a:b a.b a,b a;b a\'b 1:2 1.2 1,2 1;2 1\'2 a.1 1.a a:1',
  'a..b a.,b a.\'b 1..2 .5 5. ,x x,',
  '3rd place, 2nd try, 1st-class, 24/7, 50% off, #hashtag @mention',
  'ALL CAPS AND MiXeD CaSe WoRdS',
  'naïve café résumé über Straße',
  'İstanbul ΣΊΣΥΦΟΣ Москва',
  'ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ １２３ and the ﬁne ligature',
  '我喜欢喝咖啡',
  '我叫小橘，是一只猫。我住在北京。',
  'AI工程师 in 2023 ☕️',
  '今日は良い天気ですね。カタカナ',
  '안녕하세요 세계',
  'coffee ☕ and 👩‍💻 coding, flags 🇫🇷🇯🇵, keycap 1️⃣',
  'zero\u200bwidth space and soft\u00adhyphen',
  'the quick brown fox jumps over the lazy dog 1234567890',
  'walking walked walks relational generalization hopping agreed',
  "It's Ana's dog's toy, not the dogs' toys",
];

/** Random texts over an alphabet heavy in the characters where word boundaries are subtle. */
function randomTexts(count: number, alphabet: string, seed: number): string[] {
  const next = seededRandom(seed);
  const characters = Array.from(alphabet);
  return Array.from({ length: count }, () => {
    const length = Math.floor(next() * 24);
    return Array.from({ length }, () => characters[Math.floor(next() * characters.length)]).join('');
  });
}

const ASCII_TRICKY = "abcXYZ019 .,;:'_-\"()!?\t\n/@#$";
const ALL_ASCII = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).join('');
const MIXED = `${ASCII_TRICKY}’é中文ßİ☕️\u200d`;

describe('plainAsciiWords', () => {
  it('finds exactly the word-like segments of Intl.Segmenter, or declines', () => {
    const texts = [...CORPUS, ...randomTexts(20_000, ASCII_TRICKY, 1), ...randomTexts(5_000, ALL_ASCII, 2), ...randomTexts(5_000, MIXED, 3)];
    let answered = 0;
    for (const text of texts) {
      const words = plainAsciiWords(text);
      if (words === undefined) continue;
      answered++;
      expect(words, JSON.stringify(text)).toEqual(segmenterWords(text));
    }
    // The fast path must actually be taken for a good share of texts, not decline everything.
    expect(answered).toBeGreaterThan(10_000);
  }, 60_000);

  it('answers for plain sentences and declines where a mark joins, an underscore or a non-ASCII character appears', () => {
    expect(plainAsciiWords('I drink espresso every morning. (note 12)')).toEqual(['I', 'drink', 'espresso', 'every', 'morning', 'note', '12']);
    for (const text of ["can't", '3.14', '1,000', 'e.g', 'a:b', 'a;b', 'snake_case', 'café', '咖啡']) expect(plainAsciiWords(text), text).toBeUndefined();
  });
});

describe('tokenize and keywords with the plain-ASCII fast path', () => {
  const texts = [...CORPUS, ...randomTexts(5_000, ASCII_TRICKY, 4), ...randomTexts(3_000, MIXED, 5)];

  it('tokenize gives the same tokens as the segmenter-only implementation', () => {
    for (const text of texts) {
      expect(tokenize(text), JSON.stringify(text)).toEqual(referenceTokenize(text));
      expect(tokenize(text, { stopwords: false, stem: false }), JSON.stringify(text)).toEqual(referenceTokenize(text, { stopwords: false, stem: false }));
    }
  }, 60_000);

  it('keywords gives the same words as the segmenter-only implementation', () => {
    for (const text of texts) {
      expect(keywords(text), JSON.stringify(text)).toEqual(referenceKeywords(text));
      expect(keywords(text, 2), JSON.stringify(text)).toEqual(referenceKeywords(text, 2));
    }
  }, 60_000);
});

describe('porterStem with its cache', () => {
  it('gives the same stems on a first and a later call, also once the cache has been emptied', () => {
    const next = seededRandom(6);
    const words = Array.from({ length: 50_000 }, () =>
      Array.from({ length: 3 + Math.floor(next() * 9) }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(next() * 26)]).join(''),
    );
    const first = words.map((word) => porterStem(word));
    expect(words.map((word) => porterStem(word))).toEqual(first);
    expect(['running', 'relational', 'generalization', 'sky', 'ab', 'Running'].map((word) => porterStem(word))).toEqual([
      'run',
      'relat',
      'gener',
      'sky',
      'ab',
      'Running',
    ]);
  }, 60_000);
});
