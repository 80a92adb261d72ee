import { hasCjk, tokenize } from './tokenize.js';

/**
 * For a query with Chinese, Japanese or Korean terms: a function giving the
 * share (0..1) of the query's distinct search terms (`tokenize`) that a text
 * holds. Undefined when the query has no such term, so that a query in
 * English (or any other script written with spaces) is scored as before.
 *
 * Why: `tokenize` turns a CJK run into every character and every pair, so a
 * Chinese question of ten characters has a dozen terms and shares a
 * character or two with most texts. Search divides a keyword score by the
 * query's best match, so a memory sharing only one common character (上 of
 * 火星上 with 上海) scored as a full match when nothing shared more. Scaled by
 * this share, it counts for what it matched of the question. English keeps
 * the best-match scale: there a term is a whole word (stopwords dropped),
 * and scaling it too lowered LoCoMo's recall (see the package README).
 *
 * A CJK term counts as held when the text contains it (after the NFKC
 * normalization and lowercasing `tokenize` applies); other terms when the
 * text's own terms include them (only a query mixing scripts needs that).
 */
export function queryTermCoverage(query: string): ((text: string) => number) | undefined {
  const terms = [...new Set(tokenize(query))];
  const cjkTerms = terms.filter((term) => hasCjk(term));
  if (cjkTerms.length === 0) return undefined;
  const otherTerms = terms.filter((term) => !hasCjk(term));
  return (text) => {
    // A substring test instead of tokenizing: 2 µs against about 70 µs for a short Chinese memory.
    const normalized = text.normalize('NFKC').toLowerCase();
    let held = cjkTerms.filter((term) => normalized.includes(term)).length;
    if (otherTerms.length > 0) {
      const textTerms = new Set(tokenize(text));
      held += otherTerms.filter((term) => textTerms.has(term)).length;
    }
    return held / terms.length;
  };
}
