import type { DecayConfig } from './config.js';
import type { MemoryChange, MemoryStore } from './contracts.js';
import { planMaintenance, type MaintenancePlan } from './decay.js';
import { MemloomError } from './errors.js';
import { lastWrittenVersion, versionHolding } from './records.js';
import { historiesOf, repeatedPageGuard } from './store-reads.js';
import type { TextOperations, TextResult } from './text-operations.js';
import type { MemoryLevel, MemoryRecord, Scope } from './types.js';

export interface MaintainOptions {
  /** The time to maintain at. @default the clock's now */
  now?: Date | string | number;
  /** Plan and report, write nothing. @default false */
  dryRun?: boolean;
  /** Only memories in this scope. @default all */
  scope?: Scope;
  /**
   * Called after each page of memories is written, and after the part of a
   * page written when `signal` stops the pass: (memories done, total).
   * Awaited: a caller that yields here (to the event loop, for a Ctrl-C
   * handler to run) is waited for before the next page.
   */
  onProgress?: (done: number, total: number) => unknown;
  /**
   * Called before each memory of a page is looked at: (memories looked at so far, total), to show
   * progress inside a page of up to 10,000 memories. Those memories are not written until their
   * page is (`onProgress`). Awaited, as `onProgress`.
   */
  onScan?: (scanned: number, total: number) => unknown;
  /**
   * Keep at most this many entries in `report.changes` (the first ones, in
   * the store's order); the counts still cover every memory, and
   * `report.changesOmitted` says how many entries were left out. A pass over
   * a large store otherwise holds one entry per change. @default all
   */
  changesLimit?: number;
  /**
   * Stops the pass, throwing the signal's reason (as `fetch` does). It is
   * checked before each page is read and before each memory of a page, and
   * aborts a compression's model call in flight. What was decided for the
   * memories of the page done before the abort is written, as one batch
   * (model compressions are the slow part: they are not thrown away), and
   * `onProgress` counts them; the memory it stopped in, and those after it,
   * are left as they were, for the next pass, and pages written before stay
   * written. Already aborted: nothing is read or written. A second pass
   * after an abort finishes the rest (a pass at the same time changes
   * nothing twice).
   */
  signal?: AbortSignal;
}

export interface MaintenanceChange {
  id: string;
  action: 'compress' | 'decay' | 'delete';
  reasons: string[];
  fromLevel?: MemoryLevel;
  toLevel?: MemoryLevel;
  weight?: { from: number; to: number };
  importance?: { from: number; to: number };
  /** The compressed text (not computed in a dry run). */
  content?: string;
}

/**
 * What a pass wrote (a dry run: what it would write). `compressed`, `decayed`, `deleted`,
 * `modelFallbacks` and `changes` hold only changes written: one another writer got to first is
 * counted in `conflicts` alone.
 */
export interface MaintenanceReport {
  now: string;
  dryRun: boolean;
  scanned: number;
  compressed: number;
  decayed: number;
  deleted: number;
  unchanged: number;
  /** Memories changed or deleted by someone else during the pass, so not written; they are left for the next pass. */
  conflicts: number;
  /** Compressions written where the language model failed and the deterministic text was used. */
  modelFallbacks: number;
  changes: MaintenanceChange[];
  /** Changes made (or, in a dry run, planned) but not in `changes`, past `changesLimit`. */
  changesOmitted: number;
}

/**
 * Memories per page read, and per batch written: each batch is one
 * `store.apply`, all or nothing (one transaction in the SQLite store). A
 * pass changes memories all over the store, so every batch rewrites pages
 * the others share (index pages, vector chunk headers, the FTS segments it
 * merges) and commits, and checkpoints, once: fewer, larger batches write
 * less. At 100,000 memories in the SQLite store, batches of 2,000 took a
 * median 6.3 s and batches of 5,000 5.8 s (three alternating runs each);
 * later, batches of 10,000 saved 0.2 s against 5,000 at load 1.5 and 0.4
 * to 0.6 s at load 3 (alternating runs), while 20,000 saved nothing more at
 * load 1. A batch of 10,000 applies in about 0.4 s on a 2-core machine, so
 * another writer (or, SQLite being synchronous, the rest of this process)
 * waits no longer than that.
 */
const PAGE_SIZE = 10_000;

/**
 * The pass's pages of the store's own order. With `listPage`, each page
 * starts where the one before ended, whatever was written since. Without it,
 * by offset: a page's deleted memories leave the order, so the next page
 * starts that many places earlier; another writer's deletes in pages already
 * read still shift it, and the pass then skips as many memories, which the
 * next pass maintains. A memory seen twice (a store that reloads files
 * another process rewrote may list them again) changes nothing the second
 * time.
 */
function storedPages(store: MemoryStore, scope: Scope) {
  let after: string | undefined;
  let offset = 0;
  let previous: MemoryRecord[] | undefined;
  // A store whose place does not move (a cursor given back, an offset ignored) would keep the pass reading the same page forever.
  const guard = repeatedPageGuard(store.name, store.listPage ? 'listPage' : 'list by offset', (memory: MemoryRecord) => memory.id);
  const moved = (memories: MemoryRecord[]): MemoryRecord[] => {
    guard.check(previous, memories);
    previous = memories;
    return memories;
  };
  return {
    async read(): Promise<{ memories: MemoryRecord[]; last: boolean }> {
      if (store.listPage) {
        const page = await store.listPage({ scope, limit: PAGE_SIZE, ...(after === undefined ? {} : { after }) });
        if (page.next !== undefined && page.next === after) {
          throw new MemloomError({ code: 'STORE_ERROR', backend: store.name, message: `listPage gave the same next (${JSON.stringify(after)}) it was asked to start after` });
        }
        after = page.next;
        return { memories: moved(page.memories), last: page.next === undefined || page.memories.length === 0 };
      }
      const memories = moved(await store.list({ scope, orderBy: 'stored', limit: PAGE_SIZE, offset }));
      return { memories, last: memories.length < PAGE_SIZE };
    },
    /** The page just read was written back, `deleted` of its memories deleted. */
    wrote(pageLength: number, deleted: number): void {
      offset += pageLength - deleted;
    },
  };
}

/**
 * Seed 004's passive maintenance over every memory in scope: compress by age
 * (timestamp kept), decay weight and importance, delete what the category
 * rules say. Deterministic in `nowMs`: a second pass at the same time finds
 * nothing to do.
 */
export async function runMaintenance(input: {
  store: MemoryStore;
  text: TextOperations;
  config: DecayConfig;
  nowMs: number;
  scope: Scope;
  dryRun: boolean;
  onProgress?: (done: number, total: number) => unknown;
  onScan?: (scanned: number, total: number) => unknown;
  changesLimit?: number;
  signal?: AbortSignal;
}): Promise<MaintenanceReport> {
  const { store, config, nowMs, scope, dryRun, signal } = input;
  const nowIso = new Date(nowMs).toISOString();
  const report: MaintenanceReport = {
    now: nowIso,
    dryRun,
    scanned: 0,
    compressed: 0,
    decayed: 0,
    deleted: 0,
    unchanged: 0,
    conflicts: 0,
    modelFallbacks: 0,
    changes: [],
    changesOmitted: 0,
  };
  const changesLimit = input.changesLimit ?? Number.POSITIVE_INFINITY;
  const keepChange = (change: MaintenanceChange): void => {
    if (report.changes.length < changesLimit) report.changes.push(change);
    else report.changesOmitted++;
  };
  // Page by page in the store's own order, each page written back before the next is read: only
  // one page is held at a time, and each batch rewrites one stretch of the store (storedPages).
  const total = await store.count({ scope });
  const pages = storedPages(store, scope);
  for (;;) {
    signal?.throwIfAborted();
    const { memories: page, last } = await pages.read();
    const plans = page.map((memory) => planMaintenance(memory, nowMs, config));
    // Compressions start from the text each memory was last written with (kept in history): one read for the page.
    const compressedBelowFull = dryRun ? [] : page.filter((memory, index) => plans[index]?.compressTo !== undefined && memory.level !== 'full');
    const sources = await writtenContents(store, compressedBelowFull);
    const batch: MemoryChange[] = [];
    // What each change of `batch` reports once written (counted then: a change another writer got to first is a conflict only).
    const reported: { change: MaintenanceChange; modelFallback: boolean }[] = [];
    // Set when the signal stops the pass inside this page: the memories done before are still written below.
    let stopped = false;
    for (const [index, memory] of page.entries()) {
      if (signal?.aborted) {
        stopped = true;
        break;
      }
      if (input.onScan) await input.onScan(report.scanned, Math.max(total, report.scanned));
      const plan = plans[index] as MaintenancePlan;
      // The one slow step, a model call, comes before anything is counted: stopped inside it, this memory is left whole.
      let compressed: TextResult | undefined;
      if (plan.kind === 'update' && plan.compressTo && !dryRun) {
        try {
          // Compress from the text last written, not from the last compression, so each level keeps what matters most.
          compressed = await input.text.compress(sources.get(memory.id) ?? memory.content, memory.level, plan.compressTo, signal);
        } catch (error) {
          if (!signal?.aborted) throw error;
          stopped = true;
          break;
        }
      }
      report.scanned++;
      if (plan.kind === 'keep') {
        report.unchanged++;
        continue;
      }
      if (plan.kind === 'delete') {
        reported.push({ change: { id: memory.id, action: 'delete', reasons: plan.reasons }, modelFallback: false });
        batch.push({ op: 'delete', id: memory.id, expectedRevision: memory.revision });
        continue;
      }
      const change: MaintenanceChange = {
        id: memory.id,
        action: plan.compressTo ? 'compress' : 'decay',
        reasons: plan.reasons,
      };
      if (plan.weight !== memory.weight) change.weight = { from: memory.weight, to: plan.weight };
      if (plan.importance !== memory.importance) change.importance = { from: memory.importance, to: plan.importance };
      let content = memory.content;
      if (plan.compressTo) {
        change.fromLevel = memory.level;
        change.toLevel = plan.compressTo;
        if (compressed) {
          content = compressed.text;
          change.content = content;
        }
      }
      reported.push({ change, modelFallback: compressed?.fallbackReason !== undefined });
      const after: MemoryRecord = {
        ...memory,
        content,
        level: plan.compressTo ?? memory.level,
        weight: plan.weight,
        importance: plan.importance,
        revision: memory.revision + 1,
      };
      // A compressed memory fades: the words of the conversation it was said in go with its full text.
      if (plan.compressTo) delete after.context;
      batch.push({
        op: 'put',
        memory: after,
        expectedRevision: memory.revision,
        // The pass made `after` and never changes `memory` (read for it alone): no copies needed.
        version: versionHolding(memory, after, {
          trigger: 'passive_decay',
          action: plan.compressTo ? 'compress' : 'decay',
          reason: plan.reasons.join('; '),
          atIso: nowIso,
        }),
      });
    }
    // A dry run reports what it would write.
    const written = dryRun ? batch.map(() => true) : await applyBatch(store, batch);
    let deleted = 0;
    for (const [index, { change, modelFallback }] of reported.entries()) {
      if (!written[index]) {
        report.conflicts++;
        continue;
      }
      if (change.action === 'delete') deleted++;
      else if (change.action === 'compress') report.compressed++;
      else report.decayed++;
      if (modelFallback) report.modelFallbacks++;
      keepChange(change);
    }
    report.deleted += deleted;
    await input.onProgress?.(report.scanned, Math.max(total, report.scanned));
    if (stopped) signal?.throwIfAborted();
    if (last) break;
    pages.wrote(page.length, dryRun ? 0 : deleted);
  }
  return report;
}

/**
 * Apply a batch at once; on a conflict, apply one by one. Whether each change was written: one
 * another writer changed or deleted since the pass read it is skipped, for the next pass.
 */
async function applyBatch(store: MemoryStore, batch: MemoryChange[]): Promise<boolean[]> {
  if (batch.length === 0) return [];
  try {
    await store.apply(batch);
    return batch.map(() => true);
  } catch (error) {
    if (!MemloomError.hasCode(error, 'CONFLICT') && !MemloomError.hasCode(error, 'NOT_FOUND')) throw error;
  }
  const written: boolean[] = [];
  for (const change of batch) {
    try {
      await store.apply([change]);
      written.push(true);
    } catch (error) {
      if (!MemloomError.hasCode(error, 'CONFLICT') && !MemloomError.hasCode(error, 'NOT_FOUND')) throw error;
      written.push(false);
    }
  }
  return written;
}

/**
 * The text each compression starts from: the text the memory was last
 * written with (`lastWrittenVersion`: an add, a merge, an edit, a restore, a
 * long-term compression's rewrite), read from its history; its current
 * content when the history holds none. Not simply the last full-level
 * version: a merge into a compressed memory writes its text below full
 * level, and compressing from the full text before it brought the replaced
 * text back. Nor the last version a pass did not make: a boost or a review
 * keeps the compressed text. Read in one `historiesOf` call: one
 * `historyMany` per page on a store that declares `readMany`.
 */
async function writtenContents(store: MemoryStore, memories: readonly MemoryRecord[]): Promise<Map<string, string>> {
  const histories = await historiesOf(store, memories.map((memory) => memory.id));
  const contents = new Map<string, string>();
  for (const [index, memory] of memories.entries()) {
    const written = lastWrittenVersion(histories[index] ?? [], memory.revision);
    contents.set(memory.id, written?.after.content ?? memory.content);
  }
  return contents;
}
