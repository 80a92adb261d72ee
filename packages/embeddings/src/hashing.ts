/**
 * 32-bit FNV-1a over UTF-16 code units, with a seed so the same text can
 * give independent hashes (one for the bucket, one for the sign).
 */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  // Final avalanche (murmur3 fmix32): FNV alone leaves low bits poorly mixed for short keys.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35) >>> 0;
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * Add `weight` for `feature` into `target[offset .. offset + size)` with the
 * hashing trick: one bucket, one sign, so collisions cancel out on average.
 */
export function addHashedFeature(target: Float64Array, offset: number, size: number, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  const bucket = offset + (hash % size);
  const sign = fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1;
  target[bucket] = (target[bucket] as number) + sign * weight;
}

/** Scale `values[offset .. offset + size)` to unit length in place; returns false when it was all zeros. */
export function normalizeRange(values: Float64Array, offset: number, size: number, scale = 1): boolean {
  let norm = 0;
  for (let index = offset; index < offset + size; index++) norm += (values[index] as number) ** 2;
  if (norm === 0) return false;
  const factor = scale / Math.sqrt(norm);
  for (let index = offset; index < offset + size; index++) values[index] = (values[index] as number) * factor;
  return true;
}
