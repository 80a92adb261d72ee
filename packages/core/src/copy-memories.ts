import type { MemoryChange, MemoryStore, StoreOpenOptions } from './contracts.js';
import { checkedSignal } from './abort-signal.js';
import { describeValue, MemloomError } from './errors.js';
import type { Memory } from './memory-types.js';
import { importStandIn } from './records.js';
import { pagesOldestFirst, snapshotsOf, type OldestFirstQuery } from './store-reads.js';
import type { MemoryRecord, MemoryVersion, Scope } from './types.js';

export interface CopyProgress {
  /** Memories in the source (in scope) when the copy started. */
  total: number;
  /** Memories looked at so far. */
  done: number;
  /** Written to the target with their vector and whole history. */
  copied: number;
  /** Already in the target at the same revision, left alone by `onMismatch: 'skip'`, or deleted from the source while the copy ran. */
  skipped: number;
  /** In the target at another revision and replaced (`onMismatch: 'replace'`). */
  replaced: number;
}

export interface CopyMemoriesOptions {
  /** Where memories come from: a store, or a Memory (its store and embedder are used). */
  from: MemoryStore | Memory;
  /** Where they go. Vectors are copied as they are, so both sides must use the same embedder. */
  to: MemoryStore | Memory;
  /**
   * Open both stores for this embedder before copying.
   * @default the embedder of `from` or `to` when either is a Memory; otherwise the stores must already be open
   */
  open?: StoreOpenOptions;
  /** Copy only this scope. @default every memory */
  scope?: Scope;
  /** Memories read and written per round trip. @default 100 */
  batchSize?: number;
  /**
   * A memory already in the target at another revision: stop with CONFLICT,
   * leave the target's copy, or replace it with the source's.
   * @default 'error'
   */
  onMismatch?: 'error' | 'skip' | 'replace';
  /** Called after every batch. */
  onProgress?: (progress: CopyProgress) => void;
  /** Stops the copy between batches. */
  signal?: AbortSignal;
}

/**
 * Copy memories from one store to another, records, vectors and versions,
 * e.g. from SQLite to Qdrant when one machine is no longer enough.
 *
 * Each batch is one `apply` on the target, so with an atomic store a batch
 * lands whole or not at all. The copy is idempotent and resumable: a memory
 * already in the target at the same revision is skipped, so after a failure
 * run it again. Versions missing from the source history are filled with
 * `import` versions that say so, since a store only takes revision n after n - 1.
 */
export async function copyMemories(options: CopyMemoriesOptions): Promise<CopyProgress> {
  const from = storeOf(options.from);
  const to = storeOf(options.to);
  if (from === to) throw new MemloomError({ code: 'INVALID_OPTIONS', message: 'copyMemories needs two different stores' });
  const batchSize = options.batchSize ?? 100;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `batchSize must be a positive integer, got ${describeValue(batchSize)}` });
  }
  const onMismatch = options.onMismatch ?? 'error';
  const signal = checkedSignal(options.signal, 'copyMemories');
  signal?.throwIfAborted();
  const open = openOptions(options);
  if (open) {
    await from.open(open);
    await to.open(open);
  }

  const scope = options.scope;
  const progress: CopyProgress = { total: await from.count(scope ? { scope } : {}), done: 0, copied: 0, skipped: 0, replaced: 0 };
  // Oldest first, each page after the last memory read where the source takes `after`.
  const list = (query: OldestFirstQuery) => from.list({ ...(scope ? { scope } : {}), ...query });
  for await (const page of pagesOldestFirst(list, from, batchSize, signal)) {
    if (page.length === 0) break;
    const present = new Map((await to.getMany(page.map((record) => record.id))).map((record) => [record.id, record.revision]));
    const copyable = (record: MemoryRecord): boolean => {
      const target = present.get(record.id);
      if (target === record.revision || (target !== undefined && onMismatch === 'skip')) return false;
      if (target !== undefined && onMismatch === 'error') {
        throw new MemloomError({
          code: 'CONFLICT',
          message: `memory ${record.id} is at revision ${target} in the target and ${record.revision} in the source; pass onMismatch: 'replace' or 'skip'`,
          details: { id: record.id, source: record.revision, target },
        });
      }
      return true;
    };
    const wanted = page.filter(copyable);
    // Each one's vector and history as of one revision (read again at its new one if the app changes it meanwhile).
    const snapshots = await snapshotsOf(from, wanted, { vectors: true, keep: copyable });
    const changes: MemoryChange[] = [];
    let written = 0;
    for (const snapshot of snapshots) {
      if (!snapshot) continue;
      const { record, vector, history } = snapshot;
      if (!vector) {
        throw new MemloomError({ code: 'STORE_CORRUPT', backend: from.name, message: `memory ${record.id} has no vector in the source store`, details: { id: record.id } });
      }
      const target = present.get(record.id);
      if (target !== undefined) {
        changes.push({ op: 'delete', id: record.id, expectedRevision: target });
        progress.replaced++;
      } else {
        progress.copied++;
      }
      changes.push(...replay(record, vector, history));
      written++;
    }
    // Already in the target, or deleted from the source since this page was read.
    progress.skipped += page.length - written;
    if (changes.length > 0) await to.apply(changes);
    progress.done += page.length;
    options.onProgress?.({ ...progress });
  }
  return progress;
}

/** The puts that rebuild a memory revision by revision from its vector and history, ending at its current record. */
function replay(record: MemoryRecord, vector: number[], history: readonly MemoryVersion[]): MemoryChange[] {
  const known = new Map(history.map((entry) => [entry.version, entry]));
  const changes: MemoryChange[] = [];
  let before: MemoryRecord | null = null;
  for (let revision = 1; revision <= record.revision; revision++) {
    const entry = known.get(revision);
    const memory: MemoryRecord = revision === record.revision ? record : { ...(entry?.after ?? record), id: record.id, revision };
    const version: MemoryVersion = entry
      ? { ...entry, memoryId: record.id }
      : importStandIn(before, memory, `copied: version ${revision} was not in the source history`);
    changes.push({ op: 'put', memory, ...(revision === 1 ? { vector } : {}), expectedRevision: revision - 1, version });
    before = memory;
  }
  return changes;
}

function storeOf(value: MemoryStore | Memory): MemoryStore {
  return isMemory(value) ? value.store : value;
}

function isMemory(value: MemoryStore | Memory): value is Memory {
  return typeof (value as Memory).embedder === 'object' && typeof (value as Memory).store === 'object';
}

function openOptions(options: CopyMemoriesOptions): StoreOpenOptions | undefined {
  const embedders = [options.from, options.to].flatMap((side) => (isMemory(side) ? [side.embedder] : []));
  const [first, second] = embedders;
  if (first && second && first.id !== second.id) {
    throw new MemloomError({
      code: 'EMBEDDER_MISMATCH',
      message: `copyMemories copies vectors as they are: the source uses ${first.id} and the target ${second.id}`,
    });
  }
  if (options.open) {
    if (first && first.id !== options.open.embedderId) {
      throw new MemloomError({ code: 'EMBEDDER_MISMATCH', message: `open.embedderId is ${options.open.embedderId} but the Memory uses ${first.id}` });
    }
    return options.open;
  }
  return first ? { dimension: first.dimension, embedderId: first.id } : undefined;
}
