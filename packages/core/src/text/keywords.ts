import { CHINESE_STOPWORDS, ENGLISH_STOPWORDS } from './stopwords.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;

/**
 * The words that carry a text's meaning, in the order they first appear:
 * names, numbers and longer content words before short common ones.
 * Used by the deterministic compressor (tags, traces) when no model is set.
 */
export function keywords(text: string, limit = 6): string[] {
  const seen = new Map<string, { word: string; position: number; score: number }>();
  let position = 0;
  for (const part of segmenter.segment(text.normalize('NFKC'))) {
    if (!part.isWordLike) continue;
    const word = part.segment.replace(/['’]s$/u, '');
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

function isStopword(word: string, lower: string): boolean {
  if (CJK.test(word)) return CHINESE_STOPWORDS.has(word) || Array.from(word).length < 2;
  if (lower.length < 3 && !/\d/.test(lower)) return true;
  return ENGLISH_STOPWORDS.has(lower.replace(/['’]/gu, ''));
}

function keywordScore(word: string): number {
  if (CJK.test(word)) return 2 + Array.from(word).length / 4;
  let score = Math.min(word.length, 10) / 10;
  if (/^\p{Lu}/u.test(word)) score += 1;
  if (/\d/.test(word)) score += 0.8;
  return score;
}
