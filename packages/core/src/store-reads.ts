import type { MemoryStore } from './contracts.js';
import { MemloomError } from './errors.js';
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

/** A memory's record and history, and its vector when asked, as of one revision. */
export interface MemorySnapshot {
  record: MemoryRecord;
  history: MemoryVersion[];
  /** When asked for; undefined when the store holds none. */
  vector?: number[];
}

/** Rounds of `snapshotsOf` before a memory that changes on every read gives CONFLICT. */
export const SNAPSHOT_ROUNDS = 5;

/**
 * Snapshots of `records` (a page just listed), in their order, each as of
 * its record's revision, so a memory the app updates meanwhile never comes
 * with another revision's vector or without its newest versions. Vectors are
 * read first, then histories: a history that ends at the record's revision
 * (every write appends the version of its revision) shows the memory was
 * still at that revision, so the vector read before it was too. Only the
 * others are read again (`getMany`): one deleted meanwhile, or no longer
 * wanted by `keep`, gives undefined; one at its listed revision (a history
 * missing its last versions) is taken as read; one that changed is read
 * again at its new revision. With `readMany` that is two reads per page when
 * nothing changed, one per memory and kind otherwise. A memory still
 * changing after `SNAPSHOT_ROUNDS` rounds gives CONFLICT.
 */
export async function snapshotsOf(
  store: MemoryStore,
  records: readonly MemoryRecord[],
  options: { vectors: boolean; keep?: (record: MemoryRecord) => boolean },
): Promise<(MemorySnapshot | undefined)[]> {
  const snapshots: (MemorySnapshot | undefined)[] = records.map(() => undefined);
  let pending = records.map((record, at) => ({ record, at }));
  for (let round = 1; pending.length > 0; round++) {
    const ids = pending.map(({ record }) => record.id);
    const vectors = options.vectors ? await vectorsOf(store, ids) : [];
    const histories = await historiesOf(store, ids);
    const take = (index: number, record: MemoryRecord, at: number): void => {
      const vector = vectors[index];
      snapshots[at] = { record, history: histories[index] ?? [], ...(vector ? { vector } : {}) };
    };
    const unsure: number[] = [];
    for (const [index, { record, at }] of pending.entries()) {
      if (lastVersion(histories[index] ?? []) === record.revision) take(index, record, at);
      else unsure.push(index);
    }
    const now = new Map(unsure.length > 0 ? (await store.getMany(unsure.map((index) => ids[index] as string))).map((record) => [record.id, record]) : []);
    const changed: typeof pending = [];
    for (const index of unsure) {
      const { record, at } = pending[index] as (typeof pending)[number];
      const current = now.get(record.id);
      if (!current) continue;
      if (current.revision === record.revision) take(index, current, at);
      else if (options.keep?.(current) ?? true) changed.push({ record: current, at });
    }
    if (changed.length > 0 && round === SNAPSHOT_ROUNDS) {
      throw new MemloomError({
        code: 'CONFLICT',
        backend: store.name,
        message: `${changed.length === 1 ? 'a memory' : `${changed.length} memories`} changed on each of ${SNAPSHOT_ROUNDS} reads (first: ${changed[0]?.record.id}); try again`,
        details: { ids: changed.map(({ record }) => record.id) },
      });
    }
    pending = changed;
  }
  return snapshots;
}

function lastVersion(history: readonly MemoryVersion[]): number {
  let last = 0;
  for (const entry of history) last = Math.max(last, entry.version);
  return last;
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
 * size), by offset otherwise. By offset, memories another writer adds before
 * the place reached (an import keeping their times) move the ones read on:
 * those the page before gave are left out of a page, which is not given
 * when it holds no other (a memory may still come twice when more than a
 * page's worth were added between two reads). `signal` is checked before
 * each page is read. Pages that repeat the one before `MAX_REPEATED_PAGES`
 * times in a row are STORE_ERROR naming `store` (`repeatedPageGuard`). For
 * copies and exports.
 */
export async function* pagesOldestFirst(
  list: (query: OldestFirstQuery) => Promise<MemoryRecord[]>,
  store: Pick<MemoryStore, 'name' | 'capabilities'>,
  pageSize: number,
  signal?: AbortSignal,
): AsyncGenerator<MemoryRecord[]> {
  const takesAfter = store.capabilities.listAfter === true;
  let previous: MemoryRecord[] | undefined;
  const guard = repeatedPageGuard(store.name, takesAfter ? 'list with after' : 'list by offset', (memory: MemoryRecord) => memory.id);
  for (let offset = 0; ; offset += pageSize) {
    signal?.throwIfAborted();
    const last = previous?.[previous.length - 1];
    const place = takesAfter ? (last ? { after: last } : {}) : { offset };
    const page = await list({ orderBy: 'createdAt', direction: 'asc', limit: pageSize, ...place });
    guard.check(previous, page);
    const seen = new Set(previous?.map((memory) => memory.id));
    const fresh = page.filter((memory) => !seen.has(memory.id));
    if (page.length < pageSize) {
      yield fresh;
      return;
    }
    if (fresh.length > 0) yield fresh;
    previous = page;
  }
}

/** Pages in a row that repeat the one before them, at which a paging loop gives up (`repeatedPageGuard`). */
export const MAX_REPEATED_PAGES = 3;

/**
 * For a loop that reads a store page by page until the last: counts the pages in a row that repeat the
 * one read before them (the same items in the same order, by `key`); a page that moved on, or no page
 * before, starts the count again. A page may repeat the one before now and then: another writer adds,
 * before the place a store paged by offset has reached, as many memories as a page holds. A store whose
 * `list` ignores `offset` or `after` (or whose `pendingReindex` ignores what was staged) gives the same
 * page forever, and the loop would never end: at `MAX_REPEATED_PAGES` in a row, `check` (given each
 * page read and the one before it) throws STORE_ERROR naming `backend`. `what` names the call (`list by offset`).
 */
export function repeatedPageGuard<T>(backend: string, what: string, key: (item: T) => string) {
  let repeats = 0;
  return {
    check(previous: readonly T[] | undefined, page: readonly T[]): void {
      const repeated = !!previous && page.length > 0 && page.length === previous.length && page.every((item, index) => key(item) === key(previous[index] as T));
      repeats = repeated ? repeats + 1 : 0;
      if (repeats < MAX_REPEATED_PAGES) return;
      throw new MemloomError({
        code: 'STORE_ERROR',
        backend,
        message: `${what} gave the same ${page.length === 1 ? 'memory' : `${page.length} memories`} (first: ${key(page[0] as T)}) as the page before, ${MAX_REPEATED_PAGES} times in a row: the store does not move on to the next page, so reading to the last one would never end`,
      });
    },
  };
}
