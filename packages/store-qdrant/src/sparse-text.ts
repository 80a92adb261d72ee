import { keywordTerms, keywordText, type MemoryRecord } from '@memloom/core';

export interface SparseVector {
  indices: number[];
  values: number[];
}

export interface Bm25Parameters {
  k1: number;
  b: number;
  averageLength: number;
}

/**
 * The document side of BM25 as a sparse vector: one dimension per term of
 * core's `keywordTerms` (hashed to 32 bits), valued by saturated, length-normalized
 * term frequency. Qdrant multiplies in the IDF itself (`modifier: idf`), so
 * the dot product with a query of unit weights is the BM25 score.
 * Returns undefined for text with no terms (nothing to index).
 */
export function documentVector(text: string, parameters: Bm25Parameters): SparseVector | undefined {
  const terms = keywordTerms(text);
  if (terms.length === 0) return undefined;
  const counts = new Map<number, number>();
  for (const term of terms) {
    const index = termIndex(term);
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  const { k1, b, averageLength } = parameters;
  const norm = k1 * (1 - b + (b * terms.length) / averageLength);
  const indices = [...counts.keys()].sort((x, y) => x - y);
  return { indices, values: indices.map((index) => {
    const frequency = counts.get(index) as number;
    return (frequency * (k1 + 1)) / (frequency + norm);
  }) };
}

/** A memory's document vector: its keyword text (core's `keywordText`: the content, then the context). */
export function memoryTextVector(memory: Pick<MemoryRecord, 'content' | 'context'>, parameters: Bm25Parameters): SparseVector | undefined {
  return documentVector(keywordText(memory), parameters);
}

/** The query side: each distinct term once, weight 1. Undefined when the query has no terms. */
export function queryVector(text: string): SparseVector | undefined {
  const indices = [...new Set(keywordTerms(text).map(termIndex))].sort((x, y) => x - y);
  return indices.length === 0 ? undefined : { indices, values: indices.map(() => 1) };
}

/** FNV-1a over the term's UTF-8 bytes: a stable unsigned 32-bit dimension for the term. */
export function termIndex(term: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(term)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
