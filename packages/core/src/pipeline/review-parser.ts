/** A reviewer's final decision. */
export type ReviewVerdict = 'promote' | 'keep' | 'delete';

/** What one round of a review answered. */
export type ReviewAnswer =
  | { kind: 'decision'; decision: ReviewVerdict }
  | { kind: 'search'; query: string }
  | { kind: 'unparsed'; reason: string };

const DECISION = /\[\s*(PROMOTE|KEEP|DELETE)\s*\]/giu;
const SEARCH = /\[\s*SEARCH\s*[:：]\s*([^\]\n]*)\]/iu;
const MAX_QUERY_LENGTH = 200;

/**
 * Parse one review answer. A decision is the one decision token the answer
 * holds, or the one on its last line when it weighs several; without a
 * decision, a `[SEARCH: …]` asks for related memories. Anything else (no
 * token, a decision this kind of review does not take, an empty search) is
 * `unparsed` with why.
 */
export function parseReviewAnswer(text: string, allowed: readonly ReviewVerdict[]): ReviewAnswer {
  const decision = findDecision(text);
  if (typeof decision === 'object') return decision;
  if (decision !== undefined) {
    return allowed.includes(decision)
      ? { kind: 'decision', decision }
      : { kind: 'unparsed', reason: `[${decision.toUpperCase()}] is not a decision of this review (expected ${allowed.map((entry) => `[${entry.toUpperCase()}]`).join(', ')})` };
  }
  const search = SEARCH.exec(text);
  if (search) {
    const query = (search[1] ?? '').trim();
    if (query === '') return { kind: 'unparsed', reason: 'empty [SEARCH:] query' };
    return { kind: 'search', query: query.slice(0, MAX_QUERY_LENGTH) };
  }
  return { kind: 'unparsed', reason: 'the answer holds no decision and no [SEARCH: …]' };
}

function findDecision(text: string): ReviewVerdict | { kind: 'unparsed'; reason: string } | undefined {
  const all = tokens(text);
  if (all.length === 0) return undefined;
  const distinct = [...new Set(all)];
  if (distinct.length === 1) return distinct[0];
  const lastLine = text.trim().split(/\r?\n/u).pop() ?? '';
  const final = [...new Set(tokens(lastLine))];
  if (final.length === 1) return final[0];
  return { kind: 'unparsed', reason: `the answer weighs ${distinct.map((entry) => `[${entry.toUpperCase()}]`).join(' and ')} without ending on one` };
}

function tokens(text: string): ReviewVerdict[] {
  return [...text.matchAll(DECISION)].map((match) => (match[1] ?? '').toLowerCase() as ReviewVerdict);
}
