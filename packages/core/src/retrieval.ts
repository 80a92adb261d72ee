import type { RetrievalConfig } from './config.js';
import { DAY_MS, daysBetween } from './decay.js';
import { byScoreThenId } from './score-order.js';
import type { NamedPeriod } from './text/query-dates.js';
import type { MemoryRecord, ScoredMemory, ScoreParts } from './types.js';

export interface RankedMemory {
  memory: MemoryRecord;
  score: number;
  parts: ScoreParts;
}

/** 2^(−days / halfLife): 1 for a memory updated now, 0.5 after one half-life. */
export function recencyScore(updatedAt: string, nowMs: number, halfLifeDays: number): number {
  return 2 ** (-daysBetween(updatedAt, nowMs) / halfLifeDays);
}

/** A day on each side of a named period: a memory's time is UTC, the day a user names is their own. */
const PERIOD_MARGIN_MS = DAY_MS;

/** 1 when `createdAt` falls within the period (widened by a day on each side), else 0. */
export function dateScore(createdAt: string, period: NamedPeriod): number {
  const atMs = Date.parse(createdAt);
  return atMs >= period.fromMs - PERIOD_MARGIN_MS && atMs < period.toMs + PERIOD_MARGIN_MS ? 1 : 0;
}

/**
 * Weighted mean of the four parts (in 0..1 whatever the weights), plus `weights.date` on the
 * mean's scale when the memory was created in the period the query names (0.1 with the default
 * weights, which sum to 1), clipped to 1. Any other memory, and any query that names no period,
 * keeps the mean exactly, so a `minScore` cuts as it does without the date. Weights without
 * `date` (written before it) count no date.
 */
export function combineScore(parts: ScoreParts, weights: Omit<RetrievalConfig['weights'], 'date'> & { date?: number }): number {
  const total = weights.semantic + weights.text + weights.weight + weights.recency;
  if (total === 0) return 0;
  const mean = (weights.semantic * parts.semantic + weights.text * parts.text + weights.weight * parts.weight + weights.recency * parts.recency) / total;
  return Math.min(1, mean + ((weights.date ?? 0) * (parts.date ?? 0)) / total);
}

/**
 * Fuse the vector and keyword candidate lists into one ranking.
 *
 * - semantic: cosine, negatives clipped to 0. A memory found only by keywords
 *   was not among the vector top-k, so its cosine is at most the lowest one
 *   seen there: that bound is used.
 * - text: BM25 divided by the best BM25 among the candidates, or `bestText`
 *   when that is higher (the best match of a wider search, so that a search
 *   restricted to some memories scores them as the wider one does). A memory
 *   found only by vectors gets the lowest text score seen when the keyword
 *   list was full (it may have matched, below the cut), else 0 (it did not match).
 * - date: given the period the query names (`periodNamedIn`), whether the memory was created in it.
 */
export function rankCandidates(
  vectorHits: readonly ScoredMemory[],
  textHits: readonly ScoredMemory[],
  options: { nowMs: number; config: RetrievalConfig; candidateLimit: number; bestText?: number; period?: NamedPeriod },
): RankedMemory[] {
  const { config, nowMs } = options;
  const semanticById = new Map(vectorHits.map((hit) => [hit.memory.id, Math.max(0, hit.score)]));
  // Loops, not Math.min(...list): a search restricted to many ids has as many candidates, past what a call's arguments hold.
  const semanticFloor = vectorHits.length >= options.candidateLimit ? least(semanticById.values()) : 0;
  let bestText = Math.max(0, options.bestText ?? 0);
  for (const hit of textHits) bestText = Math.max(bestText, hit.score);
  const textById = new Map(textHits.map((hit) => [hit.memory.id, bestText > 0 ? hit.score / bestText : 0]));
  const textFloor = textHits.length >= options.candidateLimit && textById.size > 0 ? least(textById.values()) : 0;

  const memories = new Map<string, MemoryRecord>();
  for (const hit of [...vectorHits, ...textHits]) memories.set(hit.memory.id, hit.memory);

  const ranked: RankedMemory[] = [];
  for (const memory of memories.values()) {
    const parts: ScoreParts = {
      semantic: semanticById.get(memory.id) ?? semanticFloor,
      text: textById.get(memory.id) ?? textFloor,
      weight: Math.max(0, Math.min(1, memory.weight)),
      recency: recencyScore(memory.updatedAt, nowMs, config.recencyHalfLifeDays),
      ...(options.period ? { date: dateScore(memory.createdAt, options.period) } : {}),
    };
    ranked.push({ memory, parts, score: combineScore(parts, config.weights) });
  }
  return ranked.sort(byScoreThenId);
}

/** The smallest of some numbers (Infinity for none). */
function least(values: Iterable<number>): number {
  let smallest = Infinity;
  for (const value of values) smallest = Math.min(smallest, value);
  return smallest;
}
