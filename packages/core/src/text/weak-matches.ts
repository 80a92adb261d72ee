import { keywordText } from '../record-queries.js';
import type { ScoredMemory } from '../types.js';
import { CJK_RUN, distinctiveKeywordTerms, hasCjk, keywordTerms } from './tokenize.js';

/**
 * The share of its keyword score a weak match keeps: a memory that shares with a Chinese query only characters of
 * its longer words or function pairs (子 of 孩子 in 疹子, 我的). Tuned on bench/data/zh-memory.json.
 */
export const WEAK_MATCH_SHARE = 0.5;

/**
 * Keyword hits with each weak match's score cut to `WEAK_MATCH_SHARE` of it: a hit that holds none of the query's
 * `distinctiveKeywordTerms`. The keyword index matches every character and pair, so that 影片 still meets 电影
 * through 影; but a memory met only that way is no keyword match as good as one that holds a word of the
 * question, and must not take the whole keyword part of the score when it is the best there is (我对花生过敏，
 * 吃了会起疹子 for 我孩子多大了？). Computed from the memories' own text, so every store weighs alike. Hits of a
 * query without CJK (every English term is distinctive) come back as they are.
 */
export function weighWeakMatches(hits: readonly ScoredMemory[], query: string): readonly ScoredMemory[] {
  if (hits.length === 0 || !hasCjk(query)) return hits;
  const distinctive = new Set(distinctiveKeywordTerms(query));
  if (distinctive.size === new Set(keywordTerms(query)).size) return hits;
  // CJK terms are characters and pairs of the text as written (after NFKC and lowercasing): found by a substring
  // test, so a long memory is not tokenised on every search. Other terms (English words, stemmed) are looked for
  // in the terms of the text without its CJK runs, only when the CJK ones are not there.
  const cjkTerms = [...distinctive].filter((term) => hasCjk(term));
  const otherTerms = [...distinctive].filter((term) => !hasCjk(term));
  const holdsWord = (text: string) =>
    cjkTerms.some((term) => text.includes(term)) ||
    (otherTerms.length > 0 && keywordTerms(text.replace(CJK_RUN, ' ')).some((term) => distinctive.has(term)));
  return hits.map((hit) => (holdsWord(keywordText(hit.memory).normalize('NFKC').toLowerCase()) ? hit : { ...hit, score: hit.score * WEAK_MATCH_SHARE }));
}

