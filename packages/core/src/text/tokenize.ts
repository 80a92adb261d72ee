import { plainAsciiWords } from './ascii-words.js';
import { porterStem } from './porter-stemmer.js';
import { segmentInPieces } from './segment-in-pieces.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/gu;

/**
 * The version of `tokenize`'s output. It changes whenever the same text may
 * give other terms, so that anything derived from terms (a lexical
 * embedder's vector space, a stored keyword index) can name what it was built
 * with. 2: one-character Chinese function words are no terms on their own.
 * 3: long text is segmented in pieces cut only where no word can continue
 * (`segmentInPieces`); before, a cut after any punctuation or whitespace
 * could split a word such as isn't, 3.14 or a_b, so a text of more than
 * 2,000 characters could give other terms than its words. 4: the
 * traditional forms of the function characters (過 嗎 們 這 個 與 於) are
 * function characters too, as their simplified forms were (not 著: in
 * simplified text it is zhù, as in 著名 and 著作, not the particle 着).
 */
export const TOKENIZER_VERSION = 4;

export interface TokenizeOptions {
  /** Drop common English words. @default true */
  stopwords?: boolean;
  /** Porter-stem English words. @default true */
  stem?: boolean;
}

/**
 * Split text into search terms, the same way for every store so a keyword
 * query ranks alike everywhere.
 *
 * - Latin text: Unicode word boundaries, lowercased, NFKC-normalized,
 *   possessive `'s` dropped, stopwords removed, Porter-stemmed.
 * - Chinese, Japanese, Korean runs: every character and every pair of
 *   adjacent characters, so 咖啡 matches 喝咖啡 without a dictionary.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const useStopwords = options.stopwords ?? true;
  const useStem = options.stem ?? true;
  const tokens: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase();
  const asciiWords = plainAsciiWords(normalized);
  if (asciiWords) {
    for (const word of asciiWords) pushLatin(word, tokens, useStopwords, useStem);
    return tokens;
  }

  for (const part of segmentInPieces(segmenter, normalized)) {
    if (!part.isWordLike) continue;
    const word = part.segment;
    if (CJK.test(word)) {
      for (const run of word.match(CJK_RUN) ?? []) pushCjk(run, tokens, useStopwords);
      const rest = word.replace(CJK_RUN, ' ').trim();
      if (rest) for (const piece of rest.split(/\s+/)) pushLatin(piece, tokens, useStopwords, useStem);
      continue;
    }
    pushLatin(word, tokens, useStopwords, useStem);
  }
  return tokens;
}

/** True when the text holds any CJK character. */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * Characters that are Chinese function words on their own (particles, the
 * copula, pronouns): like English stopwords, they are not terms by themselves,
 * only inside pairs, so "他孩子多大了" does not match "养了一只猫" through 了.
 * In simplified and traditional spelling (过/過, 吗/嗎, 们/們, 这/這,
 * 个/個, 与/與, 于/於; the others are written alike in both). Not 著, which
 * simplified Chinese writes for zhù (著名, 著作), not for the particle 着.
 */
export const CJK_FUNCTION_CHARS: ReadonlySet<string> = new Set(Array.from('的了着过吗呢吧啊呀嘛是在和与及或也就都而我你他她它们这那个一有之其于過嗎們這個與於'));

function pushCjk(run: string, tokens: string[], useStopwords: boolean): void {
  const chars = Array.from(run);
  for (let index = 0; index < chars.length; index++) {
    if (!useStopwords || !CJK_FUNCTION_CHARS.has(chars[index] as string)) tokens.push(chars[index] as string);
    if (index + 1 < chars.length) tokens.push((chars[index] as string) + (chars[index + 1] as string));
  }
}

function pushLatin(word: string, tokens: string[], useStopwords: boolean, useStem: boolean): void {
  let cleaned = word.replace(/['’]s$/u, '').replace(/['’]/gu, '');
  if (!cleaned) return;
  if (useStopwords && ENGLISH_STOPWORDS.has(cleaned)) return;
  if (useStem) cleaned = porterStem(cleaned);
  tokens.push(cleaned);
}
