import type { MemoryStore } from './contracts.js';
import type { MemoryRecord, MemoryVersion } from './types.js';

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

/** What `pagesOldestFirst` asks of a `list`: a store's, or a Memory's. */
export interface OldestFirstQuery {
  orderBy: 'createdAt';
  direction: 'asc';
  limit: number;
  offset?: number;
  after?: MemoryRecord;
}

/**
 * Every memory `list` gives, oldest first, a page of `pageSize` at a time,
 * the last page possibly empty: each page after the last memory of the one
 * before when the store takes `after` (`capabilities.listAfter`: a memory
 * deleted meanwhile then makes it skip no other, and a page costs its own
 * size), by offset otherwise. `signal` is checked before each page is read.
 * For copies and exports.
 */
export async function* pagesOldestFirst(
  list: (query: OldestFirstQuery) => Promise<MemoryRecord[]>,
  takesAfter: boolean,
  pageSize: number,
  signal?: AbortSignal,
): AsyncGenerator<MemoryRecord[]> {
  let last: MemoryRecord | undefined;
  for (let offset = 0; ; offset += pageSize) {
    signal?.throwIfAborted();
    const place = takesAfter ? (last ? { after: last } : {}) : { offset };
    const page = await list({ orderBy: 'createdAt', direction: 'asc', limit: pageSize, ...place });
    yield page;
    if (page.length < pageSize) return;
    last = page[page.length - 1];
  }
}
