import { tokenize } from './tokenize.js';

/** English negations that negate what follows them ("not a teacher", "never been to Japan", "no car", "neither fish nor eggs"). */
export const NEGATING_WORDS: ReadonlySet<string> = new Set(['not', 'no', 'never', 'nor', 'neither', 'cannot']);
// English: those, none, nothing, nobody, nowhere and every "n't" ("don't", "isn’t").
const ENGLISH_NEGATION = new RegExp(`\\b(?:${[...NEGATING_WORDS, 'none', 'nothing', 'nobody', 'nowhere'].join('|')})\\b|\\b\\p{L}+n['’]t\\b`, 'giu');
// Chinese: 不 没 沒 别 別 未 无 無 非 勿 莫, except in common words where they do not
// negate (非常 "very", 特别 "especially", 别人 "others", 未来 "future", 不过 "but").
const CHINESE_NEGATION = /[不没沒别別未无無非勿莫]/gu;
const CHINESE_NOT_NEGATING = /非常|特别|特別|别人|別人|区别|區別|分别|分別|未来|未來|不过|不過/gu;
// Emoji and other symbols (❤️, 🍕, €), which `tokenize` drops.
const SYMBOL = /\p{S}/gu;

/** The negations in a text, each once; "don't" and "cannot" count as "not". */
function negations(text: string): Set<string> {
  const found = new Set<string>();
  for (const word of text.match(ENGLISH_NEGATION) ?? []) found.add(negationForm(word.toLowerCase()));
  for (const char of text.replace(CHINESE_NOT_NEGATING, ' ').match(CHINESE_NEGATION) ?? []) found.add(char);
  return found;
}

/**
 * The negation `word` is, as `negations` counts it ("don't" and "cannot" are "not"), when it negates what
 * follows it; undefined for any other word, "nothing" and "nobody" included (they negate nothing after them).
 */
export function englishNegation(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (NEGATING_WORDS.has(lower)) return negationForm(lower);
  // The cheap test first: keywords asks this of every word.
  return lower.endsWith('t') && CONTRACTED_NOT.test(lower) ? 'not' : undefined;
}

const CONTRACTED_NOT = /^\p{L}+n['’]t$/u;

function negationForm(lower: string): string {
  return /n['’]t$/u.test(lower) || lower === 'cannot' ? 'not' : lower;
}

/** What a statement is compared by when no model is set. */
export interface StatementTerms {
  /** The terms as written (`tokenize`: past forms stay past forms), plus the negations and symbols that search leaves out. */
  terms: Set<string>;
  negations: Set<string>;
}

/**
 * The terms of a statement, so that "I don't like coffee" is not "I like
 * coffee" and "I like 🍕" is not "I like 🍣".
 */
export function statementTerms(text: string): StatementTerms {
  const terms = new Set(tokenize(text));
  const negated = negations(text);
  for (const negation of negated) terms.add(negation);
  for (const symbol of text.match(SYMBOL) ?? []) terms.add(symbol);
  return { terms, negations: negated };
}

/**
 * True when `part` says nothing that `whole` does not: each of its terms is
 * in `whole`, and both deny the same things ("I was in Tokyo" is not covered
 * by "I was never in Tokyo or Osaka", nor the other way round).
 */
export function isCoveredBy(part: StatementTerms, whole: StatementTerms): boolean {
  return [...part.terms].every((term) => whole.terms.has(term)) && sameSet(part.negations, whole.negations);
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}
