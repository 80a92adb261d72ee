import { MemloomError } from '../errors.js';
import type { ReviewRound } from '../prompts.js';
import type { MemoryRecord, Scope } from '../types.js';
import { askModel, shortText, toPromptMemory, type PipelineContext } from './context.js';
import type { ReviewOutcome, ReviewReport } from './reports.js';
import { parseReviewAnswer, type ReviewVerdict } from './review-parser.js';

export interface ReviewInput {
  /** Only memories in this scope are reviewed, and searches stay inside it. */
  scope?: Scope;
  /** Review these memories when they are due; without ids, every fact in scope that is due (up to `maxReviewsPerCall`). */
  ids?: string[];
  /**
   * Stops the reviews, throwing the signal's reason: checked before each
   * review and each model round, and passed to the model calls (aborted in
   * flight). Decisions written before stay written.
   */
  signal?: AbortSignal;
}

/** Metadata key under which a declined promotion is recorded, so the fact is asked about again only once its importance grows. */
export const PROMOTION_REVIEW_KEY = 'promotionReview';

type ReviewKind = ReviewOutcome['kind'];

/**
 * Seed 002's MemoryReviewer: a fact whose importance reached the promotion
 * threshold is asked PROMOTE / KEEP / DELETE, one that fell below the decay
 * threshold KEEP (importance reset) / DELETE, in up to `reviewMaxRounds`
 * model calls with `[SEARCH: …]` in between. Without a usable answer nothing
 * changes: no promotion without a model, and a decaying fact is left to the
 * decay rules.
 */
export async function runReview(context: PipelineContext, input: ReviewInput): Promise<ReviewReport> {
  context.signal?.throwIfAborted();
  const report: ReviewReport = { reviewed: [], skipped: [] };
  const scoped = input.scope ? { scope: input.scope } : {};
  const candidates: Array<{ record: MemoryRecord; kind: ReviewKind }> = [];
  if (input.ids) {
    for (const id of input.ids) {
      const record = await context.memory.get(id, scoped);
      const kind = record ? dueKind(record, context) : undefined;
      if (!record) report.skipped.push({ operation: `review ${id}`, reason: 'not found in this scope' });
      else if (!kind) report.skipped.push({ operation: `review ${id}`, reason: `not due (${record.category}, importance ${record.importance})` });
      else candidates.push({ record, kind });
    }
  } else {
    for (const record of await context.memory.list({ ...scoped, filter: { category: 'fact' } })) {
      const kind = dueKind(record, context);
      if (kind) candidates.push({ record, kind });
    }
  }
  for (const [index, candidate] of candidates.entries()) {
    if (index >= context.config.maxReviewsPerCall) {
      report.skipped.push({ operation: `review ${candidate.record.id}`, reason: `over the limit of ${context.config.maxReviewsPerCall} reviews per call` });
      continue;
    }
    context.signal?.throwIfAborted();
    report.reviewed.push(await reviewOne(context, candidate.record, candidate.kind, input.scope));
  }
  return report;
}

/** Which review a memory is due for, if any. Only facts are reviewed: core and system never decay, episodes expire. */
export function dueKind(record: MemoryRecord, context: Pick<PipelineContext, 'config'>): ReviewKind | undefined {
  if (record.category !== 'fact') return undefined;
  const { promoteAtImportance, reviewBelowImportance } = context.config;
  if (record.importance >= promoteAtImportance) {
    const declined = record.metadata[PROMOTION_REVIEW_KEY] as { importance?: unknown } | undefined;
    const declinedAt = typeof declined?.importance === 'number' ? declined.importance : undefined;
    return declinedAt !== undefined && record.importance <= declinedAt ? undefined : 'promotion';
  }
  return record.importance < reviewBelowImportance ? 'decay' : undefined;
}

async function reviewOne(context: PipelineContext, record: MemoryRecord, kind: ReviewKind, scope: Scope | undefined): Promise<ReviewOutcome> {
  const outcome: ReviewOutcome = { id: record.id, kind, decision: 'none', source: 'fallback', rounds: 0, searches: [], reason: '' };
  const unchanged = kind === 'promotion' ? 'not promoted' : 'left to the decay rules';
  if (!context.model) return { ...outcome, reason: `no language model: ${unchanged}` };
  const { config } = context;
  const allowed: ReviewVerdict[] = kind === 'promotion' ? ['promote', 'keep', 'delete'] : ['keep', 'delete'];
  const nowMs = context.clock.now();
  const related = await relatedTo(context, record.content, record.id, scope);
  const rounds: ReviewRound[] = [];

  for (let round = 1; round <= config.reviewMaxRounds; round++) {
    const searchesLeft = config.reviewMaxRounds - round;
    const prompt = context.prompts.review({
      kind,
      memory: toPromptMemory(record, nowMs),
      related: related.map((entry) => toPromptMemory(entry, nowMs)),
      rounds,
      searchesLeft,
      threshold: kind === 'promotion' ? config.promoteAtImportance : config.reviewBelowImportance,
      resetTo: config.keepImportance,
    });
    const answer = await askModel(context, prompt);
    outcome.rounds = round;
    if (!answer.ok) return fallback(context, outcome, answer.reason, unchanged);
    const parsed = parseReviewAnswer(answer.text, allowed);
    if (parsed.kind === 'decision') return decide(context, record, kind, parsed.decision, shortText(answer.text, 500), outcome, scope);
    if (parsed.kind === 'unparsed') return fallback(context, outcome, parsed.reason, unchanged);
    if (searchesLeft === 0) return fallback(context, outcome, `still searching after ${config.reviewMaxRounds} rounds`, unchanged);
    outcome.searches.push(parsed.query);
    const results = await relatedTo(context, parsed.query, record.id, scope);
    rounds.push({ answer: answer.text.trim(), search: { query: parsed.query, results: results.map((entry) => toPromptMemory(entry, nowMs)) } });
  }
  return fallback(context, outcome, 'no decision', unchanged);
}

async function decide(
  context: PipelineContext,
  record: MemoryRecord,
  kind: ReviewKind,
  decision: ReviewVerdict,
  answer: string,
  outcome: ReviewOutcome,
  scope: Scope | undefined,
): Promise<ReviewOutcome> {
  const { memory, config } = context;
  const scoped = scope ? { scope } : {};
  const reason = `${kind} review: ${answer}`;
  const decided: ReviewOutcome = { ...outcome, decision, source: 'model', reason: answer };
  try {
    if (decision === 'delete') {
      // Decided on the record as it was read: a memory restated or edited during the review is kept.
      await memory.delete(record.id, { ...scoped, expectedRevision: record.revision });
      return decided;
    }
    if (decision === 'promote') {
      const after = await memory.update(record.id, { category: 'core' }, { ...scoped, trigger: 'review', action: 'promote', reason, expectedRevision: record.revision });
      return { ...decided, after };
    }
    const patch =
      kind === 'decay'
        ? { importance: config.keepImportance }
        : { metadata: { ...record.metadata, [PROMOTION_REVIEW_KEY]: { decision: 'keep', at: new Date(context.clock.now()).toISOString(), importance: record.importance } } };
    const after = await memory.update(record.id, patch, { ...scoped, trigger: 'review', action: 'review', reason, expectedRevision: record.revision });
    return { ...decided, after };
  } catch (error) {
    if (!MemloomError.hasCode(error, 'CONFLICT') && !MemloomError.hasCode(error, 'NOT_FOUND')) throw error;
    return { ...outcome, reason: `memory changed during the review (${error.code}); nothing decided` };
  }
}

function fallback(context: PipelineContext, outcome: ReviewOutcome, why: string, unchanged: string): ReviewOutcome {
  context.logger.warn?.('review: no usable decision', { id: outcome.id, kind: outcome.kind, reason: why });
  return { ...outcome, modelFallback: why, reason: `${why}: ${unchanged}` };
}

/** Memories related to `text` in scope, the one under review left out. */
async function relatedTo(context: PipelineContext, text: string, excludeId: string, scope: Scope | undefined): Promise<MemoryRecord[]> {
  const limit = context.config.reviewRelatedLimit;
  const results = await context.memory.search(text, { ...(scope ? { scope } : {}), limit: limit + 1 });
  return results
    .map((result) => result.memory)
    .filter((memory) => memory.id !== excludeId)
    .slice(0, limit);
}
