import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MemoryRecord, MemoryVersion, Scope } from '@memloom/core';
import { readIfExists, signatureOf } from './atomic-file.js';
import { defaultPreamble, renderFile, type LineProblem } from './block-format.js';
import { encodeAccess, encodeAccessDrop, encodeDeletions, encodeVectorHeader, encodeVectorRecord, encodeVersion, type AccessEntry, type LoggedVector, type VectorHeader } from './index-logs.js';
import { encodeSegment } from './scope-path.js';
import type { Transaction } from './transaction.js';

/** One memory as the store holds it in process memory. */
export interface Entry {
  record: MemoryRecord;
  vector: Float32Array | undefined;
  norm: number;
  scopeKey: string;
  /** The Markdown file it lives in, relative to the scope's `memory/` folder. */
  file: string;
  /**
   * Its place in the store's own order (core's SequencedEntry, for
   * `listPage`): given when the store first takes the memory in, kept
   * through updates; 0 until then.
   */
  seq: number;
}

export type LayoutPart = { kind: 'text'; text: string } | { kind: 'record'; id: string };

/** A Markdown file as last read or written: its parts in order. */
export interface FileLayout {
  rel: string;
  /** Signature on disk when read or written; undefined for a file not written yet. */
  signature: string | undefined;
  parts: LayoutPart[];
  problems: LineProblem[];
}

export interface ScopeState {
  key: string;
  scope: Scope;
  /** Absolute `memory/` folder. */
  directory: string;
  /** `memory/` folder relative to the store root (forward slashes), for messages. */
  displayPath: string;
  files: Map<string, FileLayout>;
  access: Map<string, AccessEntry>;
  accessLines: number;
  accessSignature: string | undefined;
  /** The vector log as read: last vector per id, with the revision of its memory it was made for. */
  vectors: Map<string, LoggedVector>;
  /** Records in vectors.bin, live or not; -1 when the file must be written anew (missing, other embedder). */
  vectorRecords: number;
  vectorSignature: string | undefined;
  /** Bytes of vectors.bin read so far. */
  vectorSize: number;
  /**
   * Memories whose block a person deleted, with when that was first seen (ms, the store's clock): their
   * history and vector wait here (`.index/deleted.log`) before they go, in case the block comes back.
   */
  deletions: Map<string, number>;
  deletionSignature: string | undefined;
}

export const MEMORY_FILE = 'MEMORY.md';

/** Where a new memory goes: episodes to the daily note of their creation day, the rest to MEMORY.md. */
export function placeFor(record: MemoryRecord): string {
  if (record.category !== 'episode') return MEMORY_FILE;
  const day = record.createdAt.slice(0, 10).replace(/-/gu, '');
  return /^\d{8}$/u.test(day) ? `${day.slice(0, 6)}/${day}.md` : MEMORY_FILE;
}

export function historyFile(scope: ScopeState, id: string): string {
  return path.join(scope.directory, '.history', `${encodeSegment(id)}.jsonl`);
}

export function vectorFile(scope: ScopeState): string {
  return path.join(scope.directory, '.index', 'vectors.bin');
}

export function accessFile(scope: ScopeState): string {
  return path.join(scope.directory, '.index', 'accessed.log');
}

export function deletionFile(scope: ScopeState): string {
  return path.join(scope.directory, '.index', 'deleted.log');
}

export function vectorNorm(vector: ArrayLike<number> | undefined): number {
  if (!vector) return 0;
  let sum = 0;
  for (let index = 0; index < vector.length; index++) sum += (vector[index] as number) ** 2;
  return Math.sqrt(sum);
}

/**
 * Changes to the store staged over the current state: entries, file
 * layouts and log records. Nothing changes in memory or on disk until
 * `stage` has filled a Transaction and it committed; `swap` then makes
 * the staged state current.
 */
export class Plan {
  readonly entries = new Map<string, Entry | null>();
  readonly layouts = new Map<string, { scope: ScopeState; layout: FileLayout; dirty: boolean }>();
  /** Files that are gone from disk (removed by hand). */
  readonly removedFiles: Array<{ scope: ScopeState; rel: string }> = [];
  private versions: Array<{ scope: ScopeState; id: string; version: MemoryVersion }> = [];
  readonly vectorRecords: Array<{ scope: ScopeState; id: string; revision: number; vector: Float32Array | undefined }> = [];
  readonly historyRemoves: Array<{ scope: ScopeState; id: string }> = [];
  /** Access times dropped from a scope's log (a memory deleted): one put again under its id starts without them. */
  readonly accessDrops = new Map<ScopeState, Set<string>>();
  private readonly historyMoves: Array<{ from: ScopeState; to: ScopeState; id: string }> = [];
  /** Scopes whose vectors.bin is written whole (compaction or a new embedder). */
  readonly vectorRewrites = new Set<ScopeState>();
  /** Hand deletions noted (when first seen, ms) or settled (null) in this plan, by scope. */
  private readonly deletionChanges = new Map<ScopeState, Map<string, number | null>>();

  constructor(
    private readonly baseEntries: Map<string, Entry>,
    private readonly scopeOf: (key: string) => ScopeState,
  ) {}

  /** True when nothing needs writing to disk. */
  get needsWrite(): boolean {
    return (
      this.dirtyLayouts.length > 0 ||
      this.versions.length > 0 ||
      this.vectorRecords.length > 0 ||
      this.historyRemoves.length > 0 ||
      this.vectorRewrites.size > 0 ||
      this.deletionChanges.size > 0
    );
  }

  entry(id: string): Entry | undefined {
    const staged = this.entries.get(id);
    if (staged === null) return undefined;
    return staged ?? this.baseEntries.get(id);
  }

  /** A layout to change (copied on first use). */
  layout(scope: ScopeState, rel: string): FileLayout {
    const key = `${scope.key}\u0000${rel}`;
    const staged = this.layouts.get(key);
    if (staged) {
      staged.dirty = true;
      return staged.layout;
    }
    const current = scope.files.get(rel);
    const layout: FileLayout = current
      ? { ...current, parts: [...current.parts], problems: [...current.problems] }
      : { rel, signature: undefined, parts: [{ kind: 'text', text: defaultPreamble(titleFor(rel)) }], problems: [] };
    this.layouts.set(key, { scope, layout, dirty: true });
    return layout;
  }

  /** Use this layout as the base for a file (freshly read from disk). */
  adoptLayout(scope: ScopeState, layout: FileLayout): void {
    this.layouts.set(`${scope.key}\u0000${layout.rel}`, { scope, layout, dirty: false });
  }

  /** Take an entry as it is on disk (no version, nothing written). */
  adoptEntry(entry: Entry): void {
    this.entries.set(entry.record.id, entry);
  }

  /** Put a record: in place when it stays in its file, else moved. */
  put(record: MemoryRecord, version: MemoryVersion | undefined, vector: Float32Array | undefined | 'keep', scope: ScopeState, inFile?: string): Entry {
    const old = this.entry(record.id);
    const file = inFile ?? (old && old.scopeKey === scope.key ? old.file : placeFor(record));
    if (old && (old.scopeKey !== scope.key || old.file !== file)) this.detach(old);
    const layout = this.layout(scope, file);
    if (!layout.parts.some((part) => part.kind === 'record' && part.id === record.id)) layout.parts.push({ kind: 'record', id: record.id });
    const keptVector = vector === 'keep' ? old?.vector : vector;
    const entry: Entry = { record, vector: keptVector, norm: vectorNorm(keptVector), scopeKey: scope.key, file, seq: 0 };
    this.entries.set(record.id, entry);
    if (old && old.scopeKey !== scope.key) {
      this.moveHistory(this.scopeOf(old.scopeKey), scope, record.id);
      if (keptVector) this.vectorRecords.push({ scope, id: record.id, revision: record.revision, vector: keptVector });
    } else if (vector !== 'keep' && (vector || old?.vector || scope.vectors.has(record.id))) {
      // Without a vector, a tombstone: the log may still hold one made for another text (a block put back at an older revision).
      this.vectorRecords.push({ scope, id: record.id, revision: record.revision, vector });
    }
    if (version) this.versions.push({ scope, id: record.id, version });
    return entry;
  }

  /**
   * The history (and the vector record) of a memory leave `from` for `to`, where its block now is. A deletion by
   * hand of it waiting in `from` (the block cut there, pasted here in a later save) is settled now: left for
   * `from`'s next look, a store opened before it would take the block for a move again.
   */
  moveHistory(from: ScopeState, to: ScopeState, id: string): void {
    this.historyMoves.push({ from, to, id });
    this.vectorRecords.push({ scope: from, id, revision: -1, vector: undefined });
    this.noteDeletion(from, id, null);
  }

  /** An apply delete: the block, the history and the vector go. */
  delete(id: string): Entry | undefined {
    const old = this.entry(id);
    if (!old) return undefined;
    this.detach(old);
    this.entries.set(id, null);
    const scope = this.scopeOf(old.scopeKey);
    this.removeHistory(scope, id);
    if (old.vector) this.vectorRecords.push({ scope, id, revision: -1, vector: undefined });
    return old;
  }

  /**
   * A memory whose block a person deleted: it leaves the store now, but its history and vector stay (a
   * pending deletion of its scope) until `forget`, so that a block seen gone only for a moment keeps them.
   */
  deleteByHand(id: string, atMs: number): void {
    const old = this.entry(id);
    if (!old) return;
    this.entries.set(id, null);
    this.noteDeletion(this.scopeOf(old.scopeKey), id, atMs);
  }

  /** Note a pending hand deletion first seen at `atMs`, or settle one (null: forgotten, or the block is back). */
  noteDeletion(scope: ScopeState, id: string, atMs: number | null): void {
    if (atMs === null && !this.isPendingDeletion(scope, id)) return;
    const changes = this.deletionChanges.get(scope) ?? new Map<string, number | null>();
    changes.set(id, atMs);
    this.deletionChanges.set(scope, changes);
  }

  isPendingDeletion(scope: ScopeState, id: string): boolean {
    const change = this.deletionChanges.get(scope)?.get(id);
    return change === undefined ? scope.deletions.has(id) : change !== null;
  }

  /** A scope's pending hand deletions as staged: id → when first seen (ms). */
  pendingDeletions(scope: ScopeState): Map<string, number> {
    const pending = new Map(scope.deletions);
    for (const [id, atMs] of this.deletionChanges.get(scope) ?? []) {
      if (atMs === null) pending.delete(id);
      else pending.set(id, atMs);
    }
    return pending;
  }

  /** Scopes whose pending hand deletions changed, with them as staged. */
  changedDeletions(): Array<{ scope: ScopeState; deletions: Map<string, number> }> {
    return [...this.deletionChanges.keys()].map((scope) => ({ scope, deletions: this.pendingDeletions(scope) }));
  }

  /** Remove what is left of a memory that is gone from the Markdown (its history, its vector). */
  forget(scope: ScopeState, id: string): void {
    this.removeHistory(scope, id);
    if (scope.vectors.has(id)) this.vectorRecords.push({ scope, id, revision: -1, vector: undefined });
    this.noteDeletion(scope, id, null);
  }

  /** The access log forgets the id (when it names it), so that a memory put again under it keeps its own time. */
  private dropAccess(scope: ScopeState, id: string): void {
    if (!scope.access.has(id)) return;
    const ids = this.accessDrops.get(scope) ?? new Set<string>();
    this.accessDrops.set(scope, ids.add(id));
  }

  /** The history goes, with the versions staged for it so far; versions staged after this start a new one. */
  private removeHistory(scope: ScopeState, id: string): void {
    this.historyRemoves.push({ scope, id });
    this.dropAccess(scope, id);
    this.versions = this.versions.filter((item) => item.id !== id);
  }

  /** Give an entry a vector (rebuild) without a version. */
  setVector(id: string, vector: Float32Array): void {
    const old = this.entry(id);
    if (!old) return;
    this.entries.set(id, { ...old, vector, norm: vectorNorm(vector) });
    this.vectorRecords.push({ scope: this.scopeOf(old.scopeKey), id, revision: old.record.revision, vector });
  }

  /** Files (scope, layout) that must be written. */
  get dirtyLayouts(): Array<{ scope: ScopeState; layout: FileLayout }> {
    return [...this.layouts.values()].filter((staged) => staged.dirty);
  }

  /**
   * Fill the transaction: rendered Markdown, history lines and removals,
   * vector records. Returns the files that will be overwritten.
   */
  async stage(transaction: Transaction, header: VectorHeader | undefined): Promise<void> {
    for (const { scope, layout } of this.dirtyLayouts) {
      const parts = layout.parts.flatMap((part): Array<{ kind: 'text'; text: string } | { kind: 'record'; record: MemoryRecord }> => {
        if (part.kind === 'text') return [part];
        const entry = this.entry(part.id);
        return entry ? [{ kind: 'record' as const, record: entry.record }] : [];
      });
      transaction.write(path.join(scope.directory, layout.rel), renderFile(parts), path.join(scope.directory, 'backups'));
    }
    // A moved memory keeps every history it has: the ones in the folders it left, then the one already at its
    // destination (another store may have moved it there first), then the versions staged now. Nothing is overwritten.
    const routes = new Map<string, ScopeState[]>();
    for (const { from, to, id } of this.historyMoves) routes.set(id, [...(routes.get(id) ?? [from]), to]);
    for (const [id, route] of routes) {
      const target = historyFile(route.at(-1) as ScopeState, id);
      const files = [...new Set(route.map((scope) => historyFile(scope, id)))].filter((file) => file !== target);
      let previous = '';
      for (const file of [...files, target]) {
        const text = (await readIfExists(file)) ?? '';
        previous += text === '' || text.endsWith('\n') ? text : `${text}\n`;
      }
      transaction.write(target, previous + this.versions.filter((item) => item.id === id).map((item) => encodeVersion(item.version)).join(''));
      for (const file of files) transaction.remove(file);
    }
    const moved = new Set(routes.keys());
    // A history removed in this plan is written anew from the versions staged after the removal (a memory
    // deleted and put again in one apply), else removed; the others get their versions appended.
    const removed = new Set(this.historyRemoves.map(({ scope, id }) => historyFile(scope, id)));
    const restarted = new Map<string, string>();
    for (const { scope, id, version } of this.versions) {
      const file = historyFile(scope, id);
      if (removed.has(file)) restarted.set(file, (restarted.get(file) ?? '') + encodeVersion(version));
      else if (!moved.has(id)) transaction.append(file, encodeVersion(version));
    }
    for (const file of removed) {
      const text = restarted.get(file);
      if (text === undefined) transaction.remove(file);
      else transaction.write(file, text);
    }

    for (const [scope, ids] of this.accessDrops) transaction.append(accessFile(scope), [...ids].map(encodeAccessDrop).join(''));

    for (const { scope, deletions } of this.changedDeletions()) {
      if (deletions.size > 0) transaction.write(deletionFile(scope), encodeDeletions(deletions));
      else if (scope.deletionSignature !== undefined) transaction.remove(deletionFile(scope));
    }

    if (header) {
      const byScope = new Map<ScopeState, Buffer[]>();
      for (const record of this.vectorRecords) {
        if (record.vector && record.vector.length !== header.dimension) continue;
        const list = byScope.get(record.scope) ?? [];
        list.push(encodeVectorRecord(record.id, record.revision, record.vector));
        byScope.set(record.scope, list);
      }
      for (const scope of new Set([...byScope.keys(), ...this.vectorRewrites])) {
        if (scope.vectorRecords < 0 || this.vectorRewrites.has(scope)) {
          transaction.write(vectorFile(scope), Buffer.concat([encodeVectorHeader(header), ...this.liveVectors(scope)]));
        } else {
          transaction.append(vectorFile(scope), Buffer.concat(byScope.get(scope) ?? []));
        }
      }
    }
  }

  /** Scopes whose vector log grew, with how many records were added (or -1 when rewritten whole). */
  vectorGrowth(): Map<ScopeState, number> {
    const growth = new Map<ScopeState, number>();
    for (const record of this.vectorRecords) growth.set(record.scope, (growth.get(record.scope) ?? 0) + 1);
    for (const scope of this.vectorRewrites) growth.set(scope, -1);
    for (const scope of growth.keys()) if (scope.vectorRecords < 0) growth.set(scope, -1);
    return growth;
  }

  /** Encoded records for every live vector of a scope, as staged, and for its memories whose deletion by hand waits. */
  liveVectors(scope: ScopeState): Buffer[] {
    const ids = new Set<string>();
    for (const [id, entry] of this.baseEntries) if (entry.scopeKey === scope.key) ids.add(id);
    for (const [id, entry] of this.entries) if (entry?.scopeKey === scope.key) ids.add(id);
    const buffers: Buffer[] = [];
    for (const id of ids) {
      const entry = this.entry(id);
      if (entry?.vector && entry.scopeKey === scope.key) buffers.push(encodeVectorRecord(id, entry.record.revision, entry.vector));
    }
    // A memory whose deletion by hand waits keeps the vector the log holds for it: its block may come back.
    for (const id of this.pendingDeletions(scope).keys()) {
      const logged = scope.vectors.get(id);
      if (logged && !this.entry(id)) buffers.push(encodeVectorRecord(id, logged.revision, logged.vector));
    }
    return buffers;
  }

  private detach(entry: Entry): void {
    const layout = this.layout(this.scopeOf(entry.scopeKey), entry.file);
    layout.parts = layout.parts.filter((part) => part.kind !== 'record' || part.id !== entry.record.id);
  }
}

/** Access log line for a touch. */
export { encodeAccess };

/** Signature of a file on disk, or undefined when missing. */
export async function diskSignature(file: string): Promise<string | undefined> {
  try {
    return signatureOf(await fs.stat(file));
  } catch {
    return undefined;
  }
}

function titleFor(rel: string): string {
  const day = rel.match(/(\d{4})(\d{2})(\d{2})\.md$/u);
  return day ? `Daily notes ${day[1]}-${day[2]}-${day[3]}` : 'Long-term memory';
}
