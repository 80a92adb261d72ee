import path from 'node:path';
import { keywordText, type TextIndex } from '@memloom/core';
import type { Durability } from './atomic-file.js';
import { backUp, pruneBackups } from './backups.js';
import { storeError } from './errors.js';
import type { VectorHeader } from './index-logs.js';
import { assertNotLinked } from './linked-folders.js';
import { syncVectors } from './loader.js';
import type { ResolvedOptions } from './options.js';
import { writeScopeValueFiles } from './scope-path.js';
import { Transaction } from './transaction.js';
import { accessFile, deletionFile, type Entry, type Plan, type ScopeState } from './world.js';

/** The parts of the store a commit reads and updates. */
export interface StoreState {
  readonly root: string;
  readonly options: ResolvedOptions;
  readonly durability: Durability;
  readonly stateDirectory: string;
  readonly journalFile: string;
  readonly entries: Map<string, Entry>;
  readonly scopes: Map<string, ScopeState>;
  readonly text: TextIndex;
  header: VectorHeader | undefined;
  /** The last `Entry.seq` given. */
  lastSeq: number;
}

export function newTransaction(store: StoreState): Transaction {
  return new Transaction(store.journalFile, path.join(store.stateDirectory, 'trash'), store.durability, () => store.options.clock.now());
}

/**
 * Write a plan: Markdown through temp files with a backup of each
 * overwritten file (checked unchanged since it was read), logs, journal;
 * then make it the store's state. A file with problems is never written,
 * nor one in a folder (scope, `memory/`, month) that is a symbolic link.
 * `operation` names the write in the error of one refused past its commit point.
 */
export async function commitPlan(store: StoreState, plan: Plan, operation: string): Promise<void> {
  for (const { scope, layout } of plan.dirtyLayouts) {
    const problem = layout.problems[0];
    if (problem) {
      throw storeError(
        'STORE_CORRUPT',
        `${problem.path}:${problem.line}: ${problem.message}. Fix the file (it is left as it is) before memloom writes to it again`,
        { path: problem.path, line: problem.line, scope: scope.scope },
      );
    }
    // A put or delete writes a Markdown file of its scope, so this keeps its history and vectors off links too;
    // the other writes (a sync's) are to scopes and files found without following links.
    assertNotLinked(store.root, path.dirname(path.join(scope.directory, layout.rel)));
  }
  if (plan.needsWrite) {
    for (const { scope } of plan.dirtyLayouts) await writeScopeValueFiles(store.root, scope.scope, store.durability);
    // Compact a vector log that is mostly superseded records.
    for (const scope of new Set(plan.vectorRecords.map((record) => record.scope))) {
      if (scope.vectorRecords > 2 * scope.vectors.size + 1000) plan.vectorRewrites.add(scope);
    }
    const transaction = newTransaction(store);
    await plan.stage(transaction, store.header);
    const backedUp: Array<{ scope: ScopeState; name: string }> = [];
    await transaction.commit(operation, async () => {
      for (const { scope, layout } of plan.dirtyLayouts) {
        const file = path.join(scope.directory, layout.rel);
        const name = path.basename(layout.rel);
        if (await backUp(file, layout.signature, path.join(scope.directory, 'backups'), name, store.options.clock.now(), store.durability)) {
          backedUp.push({ scope, name });
        }
      }
    });
    swap(store, plan, transaction);
    for (const { scope, name } of backedUp) {
      await pruneBackups(path.join(scope.directory, 'backups'), name, store.options.backupRetention).catch(() => undefined);
    }
    for (const scope of new Set(plan.vectorRecords.map((record) => record.scope))) {
      await syncVectors(scope, store.header).catch(() => undefined);
    }
  } else {
    swap(store, plan, undefined);
  }
}

/** Make a committed plan the current state. */
function swap(store: StoreState, plan: Plan, transaction: Transaction | undefined): void {
  // First, so that a memory deleted and put again in this plan does not take on the access time dropped.
  for (const [scope, ids] of plan.accessDrops) {
    for (const id of ids) scope.access.delete(id);
    scope.accessLines += ids.size;
    scope.accessSignature = transaction?.signatures.get(accessFile(scope)) ?? scope.accessSignature;
  }
  for (const [id, entry] of plan.entries) {
    const old = store.entries.get(id);
    if (entry === null) {
      store.entries.delete(id);
      store.text.delete(id);
      continue;
    }
    const scope = store.scopes.get(entry.scopeKey);
    const access = scope?.access.get(id);
    if (access && access.revision === entry.record.revision && access.at !== entry.record.lastAccessedAt) {
      entry.record = { ...entry.record, lastAccessedAt: access.at };
    }
    // A Map keeps a key where it was first set: a memory the store holds keeps its place, a new one comes last.
    entry.seq = old ? old.seq : ++store.lastSeq;
    store.entries.set(id, entry);
    const { content, context } = entry.record;
    if (!old || old.record.content !== content || old.record.context !== context) store.text.set(id, keywordText(entry.record));
  }
  for (const { scope, layout } of plan.layouts.values()) {
    const file = path.join(scope.directory, layout.rel);
    const signature = transaction?.signatures.get(file) ?? layout.signature;
    scope.files.set(layout.rel, { ...layout, signature });
  }
  for (const { scope, rel } of plan.removedFiles) scope.files.delete(rel);
  for (const record of plan.vectorRecords) {
    if (record.vector) record.scope.vectors.set(record.id, { vector: record.vector, revision: record.revision });
    else record.scope.vectors.delete(record.id);
  }
  for (const { scope, deletions } of plan.changedDeletions()) {
    scope.deletions = deletions;
    scope.deletionSignature = deletions.size > 0 ? transaction?.signatures.get(deletionFile(scope)) : undefined;
  }
}
