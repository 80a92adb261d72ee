import { keywordTerms, SCOPE_KEYS, type Scope, type ScopeKey } from '@memloom/core';

/**
 * The text FTS5 indexes for a memory: core's `keywordTerms` joined by spaces, so
 * every store matches and ranks the same terms (Porter stems for English,
 * single characters and pairs for Chinese, Japanese and Korean).
 */
export function indexTerms(content: string): string {
  return keywordTerms(content).join(' ');
}

/** Insert FTS rows given as a JSON array of [rowid, terms, scope terms]. */
export const INSERT_TEXT_ROWS = 'INSERT INTO memory_text (rowid, terms, scope_terms) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)';

const SCOPE_PREFIX = { userId: 'u', agentId: 'a', sessionId: 's' } as const;

/**
 * One token per scope field, in the FTS row's second column: the value in
 * hex (any id becomes a plain token), or `_` when the field is absent. A
 * scoped text search then reads only the scope's rows, as a scoped vector
 * search reads only the user's partition.
 */
export function scopeTerms(scope: Scope): string {
  return SCOPE_KEYS.map((key) => scopeTerm(key, scope[key])).join(' ');
}

function scopeTerm(key: ScopeKey, value: string | undefined): string {
  return `${SCOPE_PREFIX[key]}${value === undefined ? '_' : Buffer.from(value, 'utf8').toString('hex')}`;
}

/**
 * An FTS5 query matching any of the query's terms, inside the scope. Each
 * term is a quoted string, so operators, quotes, stars and column names in
 * the user's text are plain words. Undefined when the text holds no term.
 */
export function matchExpression(text: string, scope: Scope | undefined, exact = false): string | undefined {
  const terms = [...new Set(keywordTerms(text))];
  if (terms.length === 0) return undefined;
  const parts = [`terms : (${terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ')})`];
  if (scope) {
    for (const key of SCOPE_KEYS) {
      if (scope[key] !== undefined || exact) parts.push(`scope_terms : "${scopeTerm(key, scope[key])}"`);
    }
  }
  return parts.join(' AND ');
}
