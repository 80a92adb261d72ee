import type { MemoryStore } from './contracts.js';
import type { MemoryVersion } from './types.js';

/**
 * The histories of `ids`, in the order asked (empty for an unknown id): one
 * `historyMany` call when the store declares `readMany`, else one `history`
 * call per id, one after another.
 */
export async function historiesOf(store: MemoryStore, ids: readonly string[]): Promise<MemoryVersion[][]> {
  if (ids.length === 0) return [];
  if (store.capabilities.readMany && store.historyMany) return store.historyMany(ids);
  const histories: MemoryVersion[][] = [];
  for (const id of ids) histories.push(await store.history(id));
  return histories;
}

/** The vectors of `ids`, in the order asked (undefined for an unknown id), as `historiesOf` reads histories. */
export async function vectorsOf(store: MemoryStore, ids: readonly string[]): Promise<(number[] | undefined)[]> {
  if (ids.length === 0) return [];
  if (store.capabilities.readMany && store.getVectors) return store.getVectors(ids);
  const vectors: (number[] | undefined)[] = [];
  for (const id of ids) vectors.push(await store.getVector(id));
  return vectors;
}
