/** A reviewer's final decision. */
export type ReviewVerdict = 'promote' | 'keep' | 'delete';

/** What one round of a review answered. */
export type ReviewAnswer =
  | { kind: 'decision'; decision: ReviewVerdict }
  | { kind: 'search'; query: string }
  | { kind: 'unparsed'; reason: string };

// Brackets may be full-width too: ［KEEP］, 【KEEP】.
const DECISION = /[[［【]\s*(PROMOTE|KEEP|DELETE)\s*[\]］】]/giu;
/** A decision token that ends the answer (markdown or a full stop after it allowed), and the text before it. */
const END_DECISION = /^([\s\S]*?)[[［【]\s*(PROMOTE|KEEP|DELETE)\s*[\]］】][*_.。!！\s]*$/iu;
/** A line holding only a decision token, e.g. `**[KEEP]**`, `Decision: [KEEP].` */
const DECISION_LINE = /^[\s*_>#-]*(?:(?:decision|answer|verdict|决定|结论)\s*[:：]\s*)?[*_]*[[［【]\s*(?:PROMOTE|KEEP|DELETE)\s*[\]］】][*_.。!！\s]*$/iu;
/**
 * Words right before a final token that turn it into its opposite ("keep it rather than [DELETE]", "I
 * would not [PROMOTE]", "不 [DELETE]"). Only right before it: "It is no longer relevant, so [DELETE]"
 * decides.
 */
const NEGATED_TOKEN = /(?:\b(?:not|never|no|rather than|instead of|than|nor|without)|n['’]t(?:\s+(?:be|do|say|choose|pick|go with))?|不要?|没有?|别|無需|无需|而非|而不是)\s*[*_"'“”]*$/iu;
const SEARCH = /[[［【]\s*SEARCH\s*[:：]\s*([^\]］】\n]*)[\]］】]/iu;
const MAX_QUERY_LENGTH = 200;

/**
 * Parse one review answer. A decision is the decision token that ends the
 * answer (the prompt asks it to end so) unless the words right before it
 * negate it ("keep it rather than [DELETE].", "I would not [PROMOTE]"), or
 * else the one line that holds a decision token alone: a token inside a
 * sentence ("it should not be [PROMOTE]d") decides nothing. Brackets may be
 * full-width (【KEEP】). Without a decision, a
 * `[SEARCH: …]` asks for related memories. Anything else (no decision, a
 * decision this kind of review does not take, an empty search) is
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
  const named = [...new Set(tokens(text))].map((entry) => `[${entry.toUpperCase()}]`);
  if (named.length > 1) return { kind: 'unparsed', reason: `the answer weighs ${named.join(' and ')} without ending on one` };
  if (named.length === 1) return { kind: 'unparsed', reason: `the answer names ${named[0]} inside its text but does not end on it` };
  return { kind: 'unparsed', reason: 'the answer holds no decision and no [SEARCH: …]' };
}

function findDecision(text: string): ReviewVerdict | { kind: 'unparsed'; reason: string } | undefined {
  const ending = END_DECISION.exec(text.trim());
  if (ending) {
    const decision = (ending[2] ?? '').toLowerCase() as ReviewVerdict;
    const before = ending[1] ?? '';
    // A token that the words right before it negate decides nothing ("keep it rather than [DELETE]"): without a
    // search asked for, the memory is left as it is and why is reported.
    if (!NEGATED_TOKEN.test(before)) return decision;
    if (!SEARCH.test(text)) {
      return { kind: 'unparsed', reason: `the answer ends on [${decision.toUpperCase()}] right after words that negate it` };
    }
  }
  // A line that is a decision token alone (with the usual markdown around it), then reasons after it.
  const lines = text.split(/\r?\n/u).map((line) => line.trim());
  const alone = [...new Set(lines.filter((line) => DECISION_LINE.test(line)).flatMap((line) => tokens(line)))];
  if (alone.length === 1) return alone[0];
  if (alone.length > 1) return { kind: 'unparsed', reason: `the answer weighs ${alone.map((entry) => `[${entry.toUpperCase()}]`).join(' and ')} without ending on one` };
  return undefined;
}

function tokens(text: string): ReviewVerdict[] {
  return [...text.matchAll(DECISION)].map((match) => (match[1] ?? '').toLowerCase() as ReviewVerdict);
}
