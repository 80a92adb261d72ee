import {
  inScope,
  matchesFilter,
  type ListQuery,
  type MemoryFilter,
  type MemoryRecord,
  type Scope,
  type ScoredMemory,
  type VectorQuery,
} from '@memloom/core';
import { vectorNorm, type Entry } from './world.js';

/** Records in scope that pass the filter (not copied). */
export function matching(entries: Iterable<Entry>, scope: Scope | undefined, filter: MemoryFilter | undefined, exact?: boolean): MemoryRecord[] {
  const records: MemoryRecord[] = [];
  for (const entry of entries) {
    if (inScope(entry.record.scope, scope, exact) && matchesFilter(entry.record, filter)) records.push(entry.record);
  }
  return records;
}

/** `list` semantics: order (ties by id), offset, limit; copies. */
export function listRecords(entries: Iterable<Entry>, query: ListQuery): MemoryRecord[] {
  const key = query.orderBy ?? 'createdAt';
  const sign = query.direction === 'desc' ? -1 : 1;
  const records = matching(entries, query.scope, query.filter, query.exactScope).sort((a, b) => {
    const primary = a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
    return sign * (primary || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
  const offset = query.offset ?? 0;
  const end = query.limit === undefined ? undefined : offset + query.limit;
  return records.slice(offset, end).map((record) => structuredClone(record));
}

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
  const limit = Math.max(0, Math.floor(query.limit));
  const best: Hit[] = [];
  const worse = (a: Hit, b: Hit) => a.score < b.score || (a.score === b.score && a.entry.record.id > b.entry.record.id);
  for (const entry of entries) {
    const vector = entry.vector;
    if (!vector || !inScope(entry.record.scope, query.scope, query.exactScope) || !matchesFilter(entry.record, query.filter)) continue;
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
