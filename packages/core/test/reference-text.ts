/**
 * The segmenter-only text functions as they were before the plain-ASCII fast
 * path (commit e1cf98a), kept verbatim as the reference the fast path must
 * match. Not used by the library.
 */
import { porterStem } from '../src/text/porter-stemmer.js';
import { CHINESE_STOPWORDS, ENGLISH_STOPWORDS } from '../src/text/stopwords.js';
import { CJK_FUNCTION_CHARS } from '../src/text/tokenize.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/gu;

/** Word-like segments, as the fast path must find them. */
export function segmenterWords(text: string): string[] {
  return Array.from(segmenter.segment(text))
    .filter((part) => part.isWordLike)
    .map((part) => part.segment);
}

export function referenceTokenize(text: string, options: { stopwords?: boolean; stem?: boolean } = {}): string[] {
  const useStopwords = options.stopwords ?? true;
  const useStem = options.stem ?? true;
  const tokens: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase();

  for (const part of segmenter.segment(normalized)) {
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

export function referenceKeywords(text: string, limit = 6): string[] {
  const seen = new Map<string, { word: string; position: number; score: number }>();
  let position = 0;
  for (const word of words(text)) {
    const lower = word.toLowerCase();
    position++;
    if (seen.has(lower) || isStopword(word, lower)) continue;
    seen.set(lower, { word, position, score: keywordScore(word) });
  }
  return [...seen.values()]
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, limit)
    .sort((a, b) => a.position - b.position)
    .map((entry) => entry.word);
}

/**
 * Word-like segments, with runs of single CJK characters joined back
 * together (the segmenter splits unknown names: 小|橘 -> 小橘).
 */
function words(text: string): string[] {
  const result: string[] = [];
  let previousSingleCjk = false;
  for (const part of segmenter.segment(text.normalize('NFKC'))) {
    if (!part.isWordLike) {
      previousSingleCjk = false;
      continue;
    }
    const word = part.segment.replace(/['’]s$/u, '');
    const singleCjk = CJK.test(word) && Array.from(word).length === 1 && !SINGLE_CHAR_FUNCTION_WORDS.includes(word);
    if (singleCjk && previousSingleCjk) result[result.length - 1] += word;
    else result.push(word);
    previousSingleCjk = singleCjk;
  }
  return result;
}

/** Single characters that stand alone as grammar, never as part of a name. */
const SINGLE_CHAR_FUNCTION_WORDS = '的了是在和与也就都而着我你他她它这那有很吗呢吧啊把被让给对从到向为以叫';

function isStopword(word: string, lower: string): boolean {
  if (CJK.test(word)) {
    const chars = Array.from(word);
    // Single characters, "一只"-style numeral + measure word, and words ending in a particle ("养了", "我是").
    return CHINESE_STOPWORDS.has(word) || chars.length < 2 || (chars.length === 2 && (chars[0] === '一' || '了的着过是'.includes(chars[1] ?? '')));
  }
  // Short words are kept only when they are numbers or acronyms ("AI", "3D").
  if (lower.length < 3 && !/\d/.test(lower) && !/^\p{Lu}+$/u.test(word)) return true;
  return ENGLISH_STOPWORDS.has(lower.replace(/['’]/gu, ''));
}

function keywordScore(word: string): number {
  if (CJK.test(word)) return 2 + Array.from(word).length / 4;
  let score = Math.min(word.length, 10) / 10;
  if (/^\p{Lu}/u.test(word)) score += 1;
  if (/\d/.test(word)) score += 0.8;
  return score;
}
