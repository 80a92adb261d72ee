import { filterMatcher, inScope, type ScoredMemory, type VectorQuery } from '@memloom/core';
import { vectorNorm, type Entry } from './world.js';

interface Hit {
  entry: Entry;
  score: number;
}

/**
 * Exact cosine search over every vector in scope, keeping only the best
 * `limit` hits (sorted, ties by id) instead of sorting every score.
 */
export function nearest(entries: Iterable<Entry>, query: VectorQuery): ScoredMemory[] {
  const probe = Float64Array.from(query.vector);
  const queryNorm = vectorNorm(probe);
  const limit = query.limit; // a whole number >= 0: the store checked it (assertQueryInput)
  const best: Hit[] = [];
  const worse = (a: Hit, b: Hit) => a.score < b.score || (a.score === b.score && a.entry.record.id > b.entry.record.id);
  const matches = filterMatcher(query.filter);
  for (const entry of entries) {
    const vector = entry.vector;
    if (!vector || !inScope(entry.record.scope, query.scope, query.exactScope) || !matches(entry.record)) continue;
    const cosine = queryNorm === 0 || entry.norm === 0 ? 0 : dotProduct(vector, probe) / (queryNorm * entry.norm);
    const hit = { entry, score: Math.max(-1, Math.min(1, cosine)) };
    if (best.length === limit && (limit === 0 || !worse(best[limit - 1] as Hit, hit))) continue;
    let position = best.length;
    while (position > 0 && worse(best[position - 1] as Hit, hit)) position--;
    best.splice(position, 0, hit);
    if (best.length > limit) best.pop();
  }
  return best.map((hit) => ({ memory: structuredClone(hit.entry.record), score: hit.score }));
}

/** Dot product, unrolled by four (the hot loop of vector search). */
function dotProduct(a: Float32Array, b: Float64Array): number {
  const length = Math.min(a.length, b.length);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let index = 0;
  for (; index + 3 < length; index += 4) {
    s0 += (a[index] as number) * (b[index] as number);
    s1 += (a[index + 1] as number) * (b[index + 1] as number);
    s2 += (a[index + 2] as number) * (b[index + 2] as number);
    s3 += (a[index + 3] as number) * (b[index + 3] as number);
  }
  for (; index < length; index++) s0 += (a[index] as number) * (b[index] as number);
  return s0 + s1 + s2 + s3;
}
