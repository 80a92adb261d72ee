import { tokenize } from '@memloom/core';

/**
 * The text FTS5 indexes for a memory: core's tokens joined by spaces, so
 * every store matches and ranks the same terms (Porter stems for English,
 * single characters and pairs for Chinese, Japanese and Korean).
 */
export function indexTerms(content: string): string {
  return tokenize(content).join(' ');
}

/**
 * An FTS5 query matching any of the query's terms. Each term is a quoted
 * string, so operators, quotes, stars and column names in the user's text
 * are plain words. Undefined when the text holds no term.
 */
export function matchExpression(text: string): string | undefined {
  const terms = [...new Set(tokenize(text))];
  if (terms.length === 0) return undefined;
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}
