import { MemloomError, assertValidVector, documentVectors, historiesOf, importStandIn, type Memory, type MemoryChange, type MemoryRecord, type MemoryVersion } from '@memloom/core';
import type { ExportHeader, ExportLine } from './export-format.js';

export type OnConflict = 'error' | 'skip' | 'replace';

/** What an import did. `copy` mode: created / merged (newer history appended) / kept (already there). `merge` mode: the strategy engine's merged / kept both / created. */
export interface ImportCounts {
  mode: 'copy' | 'merge';
  /** Memories of the file handled (in scope). */
  done: number;
  created: number;
  merged: number;
  kept: number;
  /** Conflicts left as the store had them (--on-conflict skip). */
  skipped: number;
  /** Conflicts replaced by the file's copy (--on-conflict replace). */
  replaced: number;
  /** Memories of the file outside the --user/--agent/--session scope. */
  outOfScope: number;
}

export function emptyCounts(mode: ImportCounts['mode']): ImportCounts {
  return { mode, done: 0, created: 0, merged: 0, kept: 0, skipped: 0, replaced: 0, outOfScope: 0 };
}

interface Plan {
  line: ExportLine;
  kind: 'create' | 'forward' | 'replace';
  /** The store's copy, for forward and replace. */
  target?: MemoryRecord;
  vector?: number[];
}

/**
 * Write a batch of exported memories as they were: ids, fields and whole
 * histories, in one `apply` (all or nothing with an atomic store). Running
 * it again is harmless: what is already there at the same revision is kept.
 */
export async function applyExact(memory: Memory, lines: ExportLine[], header: ExportHeader, counts: ImportCounts, onConflict: OnConflict): Promise<void> {
  if (lines.length === 0) return;
  const store = memory.store;
  const present = new Map((await store.getMany(lines.map((line) => line.memory.id))).map((record) => [record.id, record]));
  const ahead = await storeAhead(store, lines, present);
  const plans: Plan[] = [];
  let kept = 0;
  let skipped = 0;
  for (const line of lines) {
    const record = line.memory;
    const target = present.get(record.id);
    if (!target) {
      plans.push({ line, kind: 'create' });
    } else if ((target.revision === record.revision && sameState(target, record)) || ahead.has(record.id)) {
      kept++;
    } else if (target.revision < record.revision && sameState(target, line.versions.find((version) => version.version === target.revision)?.after)) {
      plans.push({ line, kind: 'forward', target });
    } else if (onConflict === 'skip') {
      skipped++;
    } else if (onConflict === 'replace') {
      plans.push({ line, kind: 'replace', target });
    } else {
      throw new MemloomError({
        code: 'CONFLICT',
        backend: 'cli',
        message: `memory ${record.id} is in the store at revision ${target.revision} and in the file at revision ${record.revision}, with another history; run again with --on-conflict skip (keep the store's) or replace (take the file's)`,
        details: { id: record.id, store: target.revision, file: record.revision },
      });
    }
  }

  // A vector for the memory's current text (content and context): from the file when it comes from this embedder, else embedded now.
  const reuse = header.vectors && header.embedder.id === memory.embedder.id && header.embedder.dimension === memory.embedder.dimension;
  const needed = plans.filter(
    (plan) => plan.kind !== 'forward' || plan.line.memory.content !== plan.target?.content || plan.line.memory.context !== plan.target?.context,
  );
  const toEmbed: Plan[] = [];
  for (const plan of needed) {
    if (reuse && plan.line.vector) {
      assertValidVector(plan.line.vector, memory.embedder.dimension, `the vector of ${plan.line.memory.id} in the file`);
      plan.vector = plan.line.vector;
    } else {
      toEmbed.push(plan);
    }
  }
  if (toEmbed.length > 0) {
    // As core embeds a memory: the content's vector moved toward its context's.
    const vectors = await documentVectors(memory.embedder, toEmbed.map((plan) => plan.line.memory), memory.config.retrieval.contextWeight);
    toEmbed.forEach((plan, index) => {
      plan.vector = vectors[index];
    });
  }

  const changes: MemoryChange[] = [];
  for (const plan of plans) {
    if (plan.kind === 'replace') changes.push({ op: 'delete', id: plan.line.memory.id, expectedRevision: plan.target!.revision });
    const from = plan.kind === 'forward' ? plan.target!.revision : 0;
    changes.push(...replay(plan.line, from, plan.vector));
  }
  if (changes.length > 0) await store.apply(changes);
  for (const plan of plans) {
    if (plan.kind === 'create') counts.created++;
    else if (plan.kind === 'forward') counts.merged++;
    else counts.replaced++;
  }
  counts.kept += kept;
  counts.skipped += skipped;
}

/**
 * The puts that take a memory from revision `from` to its exported state,
 * one version at a time. A version missing from the file is filled with an
 * `import` version that says so (a store takes revision n only after n - 1).
 * The vector goes with the first put (creation) or the last (new text).
 */
function replay(line: ExportLine, from: number, vector: number[] | undefined): MemoryChange[] {
  const record = line.memory;
  const known = new Map<number, MemoryVersion>(line.versions.map((version) => [version.version, version]));
  const changes: MemoryChange[] = [];
  let before: MemoryRecord | null = known.get(from)?.after ?? null;
  for (let revision = from + 1; revision <= record.revision; revision++) {
    const entry = known.get(revision);
    const state: MemoryRecord = revision === record.revision ? record : { ...(entry?.after ?? record), id: record.id, revision };
    const version: MemoryVersion = entry ?? importStandIn(before, state, `imported: version ${revision} was not in the export`);
    const withVector = vector && (revision === 1 || revision === record.revision);
    changes.push({ op: 'put', memory: state, ...(withVector ? { vector } : {}), expectedRevision: revision - 1, version });
    before = state;
  }
  return changes;
}

/**
 * Ids of memories the store holds at a later revision than the file, whose version at the file's
 * revision is the file's state: a backup taken before the memory moved on (a merge, a
 * maintenance pass). The store's copy is newer, and kept.
 */
async function storeAhead(store: Memory['store'], lines: readonly ExportLine[], present: ReadonlyMap<string, MemoryRecord>): Promise<Set<string>> {
  const behind = lines.filter((line) => (present.get(line.memory.id)?.revision ?? 0) > line.memory.revision);
  const histories = await historiesOf(store, behind.map((line) => line.memory.id));
  const ahead = new Set<string>();
  behind.forEach((line, index) => {
    const then = histories[index]?.find((version) => version.version === line.memory.revision)?.after;
    if (sameState(line.memory, then)) ahead.add(line.memory.id);
  });
  return ahead;
}

/** Same content, level and historical timestamp: the same state of a memory. */
function sameState(a: MemoryRecord, b: MemoryRecord | undefined): boolean {
  return b !== undefined && a.content === b.content && a.level === b.level && a.updatedAt === b.updatedAt;
}
