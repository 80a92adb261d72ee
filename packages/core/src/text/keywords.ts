import { plainAsciiWords } from './ascii-words.js';
import { segmentInPieces } from './segment-in-pieces.js';
import { CHINESE_STOPWORDS, ENGLISH_STOPWORDS } from './stopwords.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;

/**
 * The words that carry a text's meaning, in the order they first appear:
 * names, numbers and longer content words before short common ones.
 * Used by the deterministic compressor (tags, traces) when no model is set.
 */
export function keywords(text: string, limit = 6): string[] {
  // NFKC leaves ASCII as it is, so plain ASCII text skips the normalization.
  const rawAsciiWords = plainAsciiWords(text);
  const normalized = rawAsciiWords ? text : text.normalize('NFKC');
  // Plain ASCII words (see ascii-words.ts) hold no CJK and no apostrophe: the same rules, without the regular expressions.
  const asciiWords = rawAsciiWords ?? plainAsciiWords(normalized);
  const stopword = asciiWords ? isAsciiStopword : isStopword;
  const score = asciiWords ? asciiKeywordScore : keywordScore;
  // Candidates in the order they first appear (their position is their index here).
  const seen = new Set<string>();
  const found: string[] = [];
  const scores: number[] = [];
  for (const word of asciiWords ?? words(normalized)) {
    const lower = word.toLowerCase();
    if (seen.has(lower) || stopword(word, lower)) continue;
    seen.add(lower);
    found.push(word);
    scores.push(score(word));
  }
  if (!Number.isInteger(limit) || limit < 0) {
    // Array.slice's reading of an odd limit (negative: from the end), kept as it was.
    return found
      .map((word, position) => ({ word, position, score: scores[position] as number }))
      .sort((a, b) => b.score - a.score || a.position - b.position)
      .slice(0, limit)
      .sort((a, b) => a.position - b.position)
      .map((entry) => entry.word);
  }
  if (found.length <= limit) return found;
  // The `limit` best scores, the earlier word first on a tie, returned in text order. A
  // selection, not a sort: limit is small (2 to 6) and a text has a handful of candidates.
  const chosen = new Array<boolean>(found.length).fill(false);
  for (let pick = 0; pick < limit; pick++) {
    let best = -1;
    for (let index = 0; index < found.length; index++) {
      if (!chosen[index] && (best < 0 || (scores[index] as number) > (scores[best] as number))) best = index;
    }
    chosen[best] = true;
  }
  return found.filter((_, index) => chosen[index]);
}

/**
 * Word-like segments, with runs of single CJK characters joined back
 * together (the segmenter splits unknown names: 小|橘 -> 小橘).
 */
function words(normalized: string): string[] {
  const result: string[] = [];
  let previousSingleCjk = false;
  for (const part of segmentInPieces(segmenter, normalized)) {
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

/** isStopword for a run of ASCII letters and digits. */
function isAsciiStopword(word: string, lower: string): boolean {
  if (lower.length < 3 && !hasDigit(word) && !isUppercase(word)) return true;
  return ENGLISH_STOPWORDS.has(lower);
}

/** keywordScore for a run of ASCII letters and digits. */
function asciiKeywordScore(word: string): number {
  let score = Math.min(word.length, 10) / 10;
  const first = word.charCodeAt(0);
  if (first >= 0x41 && first <= 0x5a) score += 1;
  if (hasDigit(word)) score += 0.8;
  return score;
}

function hasDigit(word: string): boolean {
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code >= 0x30 && code <= 0x39) return true;
  }
  return false;
}

/** Every character A-Z (so not empty, no digit, no lowercase). */
function isUppercase(word: string): boolean {
  if (word.length === 0) return false;
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code < 0x41 || code > 0x5a) return false;
  }
  return true;
}

function keywordScore(word: string): number {
  if (CJK.test(word)) return 2 + Array.from(word).length / 4;
  let score = Math.min(word.length, 10) / 10;
  if (/^\p{Lu}/u.test(word)) score += 1;
  if (/\d/.test(word)) score += 0.8;
  return score;
}
