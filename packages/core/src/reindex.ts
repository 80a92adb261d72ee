import type { Embedder, MemoryStore, ReindexStatus, StagedVector } from './contracts.js';
import { DEFAULT_CONTEXT_WEIGHT } from './config.js';
import { checkedSignal } from './abort-signal.js';
import { describeValue, MemloomError } from './errors.js';
import { repeatedPageGuard } from './store-reads.js';
import type { MemoryRecord } from './types.js';
import { documentVectors } from './vector.js';

export interface ReindexOptions {
  /** A store whose `capabilities.reindex` is true. */
  store: MemoryStore;
  /** The embedder to move to; every memory's content (and context) is embedded with it. */
  embedder: Embedder;
  /**
   * How far a memory's context pulls its vector (`retrieval.contextWeight`
   * of the Memory that reads the store): use the same value. @default 0.7
   */
  contextWeight?: number;
  /** Memories embedded per call to the embedder (and per store write). @default 64 */
  batchSize?: number;
  /**
   * Called once at the start (with what an earlier run already did) and after each batch. A
   * promise it returns is awaited before the next batch (a caller can yield to its event loop
   * there, so a signal it aborts from a handler is seen).
   */
  onProgress?: (progress: ReindexProgress) => unknown;
  /**
   * Stops between batches (throwing the signal's reason); what was staged so far is kept for the next run.
   * It also goes to the embedder (`EmbedOptions.signal`), which may stop the batch it is embedding (nothing of
   * it staged); a batch the embedder finishes is staged.
   */
  signal?: AbortSignal;
}

export interface ReindexProgress {
  /** Memories that hold a vector from the new embedder. */
  done: number;
  /** Memories in the store. */
  total: number;
  embedderId: string;
}

export interface ReindexReport {
  embedderId: string;
  dimension: number;
  /** Memories in the store when the switch happened. */
  total: number;
  /** Memories embedded by this run. */
  embedded: number;
  /** Memories an earlier, interrupted run had already embedded. */
  resumed: number;
}

/** Rounds in a row that may stage nothing (memories changing underneath) before giving up. */
const MAX_IDLE_ROUNDS = 5;

/**
 * Move a store to another embedder: embed every memory's content with
 * `embedder`, stage the vectors batch by batch, then switch the store over
 * in one step. The store keeps answering with its old vectors until the
 * switch. Interrupted (crash, abort), a second call resumes where the first
 * stopped. Fails with NOT_SUPPORTED when the store cannot re-index.
 */
export async function reindex(options: ReindexOptions): Promise<ReindexReport> {
  const { store, embedder } = options;
  const contextWeight = options.contextWeight ?? DEFAULT_CONTEXT_WEIGHT;
  if (!(contextWeight >= 0) || !Number.isFinite(contextWeight)) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `contextWeight must be a finite number >= 0, got ${describeValue(contextWeight)}` });
  }
  const batchSize = options.batchSize ?? 64;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `batchSize must be a positive integer, got ${describeValue(batchSize)}` });
  }
  const signal = checkedSignal(options.signal, 'reindex');
  // Already aborted: nothing is begun (beginning another target would drop a re-index in progress).
  signal?.throwIfAborted();
  const methods = reindexMethods(store);
  const target = { dimension: embedder.dimension, embedderId: embedder.id };
  let status: ReindexStatus = await methods.begin(target);
  const resumed = status.done;
  let embedded = 0;
  const report = (current: ReindexStatus) => options.onProgress?.({ done: current.done, total: current.total, embedderId: embedder.id });
  await report(status);

  /** The batch before, when the store kept vectors for it. */
  let keptBatch: MemoryRecord[] | undefined;
  // The memories just staged, at the same revisions, again: a store that ignores what was staged would never run out.
  const guard = repeatedPageGuard(store.name, 'pendingReindex', (memory: MemoryRecord) => `${memory.id} at revision ${memory.revision}`);
  for (let idleRounds = 0; ; ) {
    // The caller's own abort: rethrow its reason, as fetch() does. Staged vectors stay for the next run.
    signal?.throwIfAborted();
    const batch = await methods.pending(batchSize);
    if (batch.length === 0) break;
    guard.check(keptBatch, batch);
    const vectors = await documentVectors(embedder, batch, contextWeight, signal);
    const staged: StagedVector[] = batch.map((memory, index) => ({ id: memory.id, revision: memory.revision, vector: vectors[index]! }));
    const kept = await methods.stage(staged);
    embedded += kept;
    status = { ...status, done: status.done + kept };
    await report(status);
    idleRounds = kept === 0 ? idleRounds + 1 : 0;
    keptBatch = kept === 0 ? undefined : batch;
    if (idleRounds >= MAX_IDLE_ROUNDS) {
      throw new MemloomError({
        code: 'CONFLICT',
        backend: store.name,
        message: `re-index to ${embedder.id}: memories keep changing while they are embedded; run reindex() again when writes calm down`,
      });
    }
  }
  await methods.commit();
  return { embedderId: embedder.id, dimension: embedder.dimension, total: status.total, embedded, resumed };
}

function reindexMethods(store: MemoryStore) {
  const { beginReindex, pendingReindex, stageReindex, commitReindex } = store;
  if (!store.capabilities.reindex || !beginReindex || !pendingReindex || !stageReindex || !commitReindex) {
    throw new MemloomError({
      code: 'NOT_SUPPORTED',
      backend: store.name,
      message: 'this store cannot re-index in place; export the memories and add them to a new store with the new embedder',
    });
  }
  return {
    begin: beginReindex.bind(store),
    pending: pendingReindex.bind(store),
    stage: stageReindex.bind(store),
    commit: commitReindex.bind(store),
  };
}

