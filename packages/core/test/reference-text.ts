/**
 * The segmenter-only text functions as they were before the plain-ASCII fast
 * path (commit e1cf98a), kept verbatim as the reference the fast path must
 * match. Not used by the library. `referenceKeywords` reads the whole text with one
 * segmenter and the general rules; the joining of Chinese words and the stopwords are
 * keywords.ts' own (`joinedWords`, `isStopword`, `keywordScore`).
 */
import { porterStem } from '../src/text/porter-stemmer.js';
import { isStopword, joinedWords, keywordScore } from '../src/text/keywords.js';
import { ENGLISH_STOPWORDS } from '../src/text/stopwords.js';
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
  // The joining of Chinese words and the stopwords are keywords' own; only the segmenting differs.
  for (const word of joinedWords(segmenter.segment(text.normalize('NFKC')))) {
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

