import type { RetrievalConfig } from './config.js';
import { daysBetween } from './decay.js';
import { byScoreThenId } from './score-order.js';
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

/** Weighted mean of the parts, so the score stays in 0..1 whatever the weights. */
export function combineScore(parts: ScoreParts, weights: RetrievalConfig['weights']): number {
  const total = weights.semantic + weights.text + weights.weight + weights.recency;
  if (total === 0) return 0;
  return (
    (weights.semantic * parts.semantic + weights.text * parts.text + weights.weight * parts.weight + weights.recency * parts.recency) /
    total
  );
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
 */
export function rankCandidates(
  vectorHits: readonly ScoredMemory[],
  textHits: readonly ScoredMemory[],
  options: { nowMs: number; config: RetrievalConfig; candidateLimit: number; bestText?: number },
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
