import { createHash } from 'node:crypto';
import { createMemory, describeValue, inScope, MemloomError, pagesOldestFirst, snapshotsOf, type Memory, type OldestFirstQuery, type Scope } from '@memloom/core';
import { assertNewIdOnLine, EXPORT_FORMAT, isNotJsonLine, parseHeader, parseLine, type ExportHeader, type ExportLine } from './export-format.js';
import { applyExact, emptyCounts, type ImportCounts, type OnConflict } from './import-exact.js';

/** Memories an export reads per page: 100,000 from one SQLite file took 4.0 s with pages of 1,000, 9.6 s with pages of 200. */
const PAGE_SIZE = 1000;

export interface ExportOptions {
  /** Export only this scope. @default every memory */
  scope?: Scope;
  /** Include each memory's vector. @default false */
  vectors?: boolean;
  /** Receives the file, line by line (each ends with a newline). */
  write: (text: string) => Promise<void> | void;
  onProgress?: (done: number, total: number) => void;
  /** Checked between pages; an aborted export throws the signal's reason. */
  signal?: AbortSignal;
  /** Memories read per page (with their histories, and vectors when asked). @default 1000 */
  batchSize?: number;
}

/** Write a memloom export (JSON Lines: a header, then one memory with its history per line). Returns how many memories. */
export async function exportMemories(memory: Memory, options: ExportOptions): Promise<{ header: ExportHeader; exported: number }> {
  const scoped = options.scope && Object.keys(options.scope).length > 0 ? { scope: options.scope } : {};
  const pageSize = options.batchSize ?? PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'cli', message: `exportMemories: batchSize must be a positive integer, got ${describeValue(options.batchSize)}` });
  }
  const total = await memory.count(scoped);
  const header: ExportHeader = {
    memloom: 'export',
    format: EXPORT_FORMAT,
    exportedAt: new Date(memory.clock.now()).toISOString(),
    store: memory.store.name,
    embedder: { id: memory.embedder.id, dimension: memory.embedder.dimension },
    scope: options.scope ?? {},
    count: total,
    vectors: options.vectors ?? false,
  };
  await options.write(`${JSON.stringify(header)}\n`);
  let exported = 0;
  // Oldest first, each page after the last memory written where the store takes `after` (every store here).
  const list = (query: OldestFirstQuery) => memory.list({ ...scoped, ...query });
  for await (const page of pagesOldestFirst(list, memory.store, pageSize, options.signal)) {
    // Histories (and vectors) a page at a time, a few requests per page on a server store (`readMany`),
    // each as of its record's revision (a memory the app changes meanwhile is read again; one it deletes is left out).
    for (const snapshot of await snapshotsOf(memory.store, page, { vectors: options.vectors ?? false })) {
      if (!snapshot) continue;
      const line: ExportLine = { memory: snapshot.record, versions: snapshot.history };
      if (snapshot.vector) line.vector = snapshot.vector;
      await options.write(`${JSON.stringify(line)}\n`);
      exported++;
    }
    options.onProgress?.(exported, total);
  }
  return { header, exported };
}

export interface ImportOptions {
  /** The export, line by line (blank lines are ignored). A readline interface must be created right before the call. */
  lines: AsyncIterable<string> | Iterable<string>;
  /** Named in errors: a file path or `stdin`. @default 'the export' */
  source?: string;
  /** `copy` writes memories as they were; `merge` adds each through the strategy engine. @default 'copy' */
  mode?: 'copy' | 'merge';
  /** copy mode: a memory the store holds with another history. @default 'error' */
  onConflict?: OnConflict;
  /** Import only memories in this scope. */
  scope?: Scope;
  /** Memories per store write. @default 100 */
  batchSize?: number;
  /** Memory lines already handled by an earlier run (merge mode's checkpoint): read and passed over. @default 0 */
  skip?: number;
  /** Counts to continue from (merge mode's checkpoint). */
  counts?: ImportCounts;
  /** Called once the header is read (a promise it returns is awaited before the first memory). */
  onHeader?: (header: ExportHeader) => Promise<void> | void;
  /** Called once the store is opened, before the first memory is written (awaited; what it throws stops the import). */
  onOpen?: () => Promise<void> | void;
  /** merge mode: the id of each memory it creates (a caller can record it before the write, to find out later whether it was made). */
  generateId?: () => string;
  /** Called after each batch (copy) or memory (merge) with the memory lines handled so far. */
  onProgress?: (position: number, header: ExportHeader, counts: ImportCounts) => Promise<void> | void;
  /** Checked between batches (copy) or memories (merge), and passed to each merge's `add` (its model call). */
  signal?: AbortSignal;
}

export interface ImportResult {
  header: ExportHeader;
  counts: ImportCounts;
  /**
   * Memory lines the file held after its header. Fewer than `header.count` means the file was cut
   * short (or memories were deleted while it was exported): the caller should say so.
   */
  read: number;
}

/**
 * Read a memloom export into a memory's store. In copy mode every memory
 * keeps its id, fields and whole history; running the import again keeps
 * what is there (so it resumes); a memory that is in the file twice (in
 * one batch or two) is written once if both lines are the same, and is
 * INVALID_INPUT naming both lines if they differ. Merge mode adds each
 * memory's content through the strategy engine.
 */
export async function importMemories(memory: Memory, options: ImportOptions): Promise<ImportResult> {
  const source = options.source ?? 'the export';
  const mode = options.mode ?? 'copy';
  const batchSize = options.batchSize ?? 100;
  // Copy mode writes in batches of this size; merge mode adds one memory at a time and never reads it.
  if (mode === 'copy' && (!Number.isInteger(batchSize) || batchSize < 1)) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'cli', message: `importMemories: batchSize must be a positive integer, got ${describeValue(options.batchSize)}` });
  }
  const skip = options.skip ?? 0;
  const scope = options.scope && Object.keys(options.scope).length > 0 ? options.scope : undefined;
  const counts = options.counts ? { ...options.counts } : emptyCounts(mode);
  const wanted = (line: ExportLine) => !scope || inScope(line.memory.scope, scope);
  // Open the store (for the memory's embedder) only once reading has begun: a
  // readline interface drops the lines it emits before anyone iterates it.
  let opened = false;
  const open = async () => {
    if (opened) return;
    await memory.count();
    await options.onOpen?.();
    opened = true;
  };

  // Merge mode adds each memory in its own scope, exactly: the memory's default scope is not merged into it.
  let merging: Memory | undefined;
  let header: ExportHeader | undefined;
  let lineNumber = 0;
  let position = 0;
  let batch: BatchEntry[] = [];
  const firstLines: FirstLines = new Map();
  const flush = async () => {
    if (batch.length === 0) return;
    options.signal?.throwIfAborted();
    const inScope = batch.filter((entry) => !entry.repeated && wanted(entry.line)).map((entry) => entry.line);
    await open();
    await applyExact(memory, inScope, header!, counts, options.onConflict ?? 'error');
    // A repeated line holds what its first copy wrote (or skipped on conflict): kept, in whichever batch it is.
    const repeatedInScope = batch.filter((entry) => entry.repeated && wanted(entry.line)).length;
    counts.kept += repeatedInScope;
    counts.done += inScope.length + repeatedInScope;
    counts.outOfScope += batch.length - inScope.length - repeatedInScope;
    batch = [];
    await options.onProgress?.(position, header!, counts);
  };
  for await (const text of options.lines) {
    lineNumber++;
    if (text.trim() === '') continue;
    if (!header) {
      header = parseHeader(text, source);
      await options.onHeader?.(header);
      continue;
    }
    let line: ExportLine;
    let repeated = false;
    try {
      line = parseLine(text, source, lineNumber, memory.config.limits);
      if (mode === 'copy') assertNewIdOnLine(line, source, lineNumber);
      if (mode === 'copy' && position + 1 > skip) repeated = repeatsEarlierLine(firstLines, line.memory.id, text, lineNumber, source);
    } catch (error) {
      // A file cut mid-line: the complete memories before the cut are written first, and the error says how many.
      // A memory that breaks a rule stops its batch before any of it is written.
      if (isNotJsonLine(error)) await flush();
      throw error;
    }
    position++;
    if (position <= skip) continue;
    if (mode === 'copy') {
      batch.push({ line, repeated });
      if (batch.length >= batchSize) await flush();
      continue;
    }
    options.signal?.throwIfAborted();
    if (wanted(line)) {
      await open();
      merging ??= sameMemory(memory, options.generateId ? { generateId: options.generateId } : {});
      await mergeOne(merging, line, counts, options.signal);
      counts.done++;
    } else {
      counts.outOfScope++;
    }
    await options.onProgress?.(position, header, counts);
  }
  if (!header) throw new MemloomError({ code: 'INVALID_INPUT', backend: 'cli', message: `${source} is empty: expected a memloom export` });
  await flush();
  return { header, counts, read: position };
}

/** A memory line of the file waiting in a copy batch; a repeated one is not written again. */
interface BatchEntry {
  line: ExportLine;
  repeated: boolean;
}

/** Where each memory id of a copy import was first, with a digest of that line: the lines themselves would hold the whole file. */
type FirstLines = Map<string, { lineNumber: number; digest: string }>;

/**
 * Whether this line repeats an earlier line of the file for the same memory word for word (its first
 * copy writes it). The same id on two different lines is an error naming both, in one batch or two:
 * the file does not say which of them to keep, and a later batch must not take the store's copy,
 * written from the first line, for a conflict.
 */
function repeatsEarlierLine(firstLines: FirstLines, id: string, text: string, lineNumber: number, source: string): boolean {
  const digest = createHash('sha1').update(text.trim()).digest('base64');
  const earlier = firstLines.get(id);
  if (!earlier) {
    firstLines.set(id, { lineNumber, digest });
    return false;
  }
  if (earlier.digest === digest) return true;
  throw new MemloomError({
    code: 'INVALID_INPUT',
    backend: 'cli',
    message: `${source}, lines ${earlier.lineNumber} and ${lineNumber}: memory ${id} is in the file twice, with different contents; remove the copy that should not be imported`,
    details: { source, id, lines: [earlier.lineNumber, lineNumber] },
  });
}

/**
 * The same memory (store, embedder, configuration, model, clock, prompts), with `scope` as its default
 * scope (none when not given: `add` fills the scope it is given from the default one, which would move a
 * memory of another user or agent into the configured user's) and, when given, `generateId` for the ids
 * of new memories. Not closed: it shares the store of `memory`.
 */
export function sameMemory(memory: Memory, options: { scope?: Scope; generateId?: () => string } = {}): Memory {
  return createMemory({
    ...memory.config,
    store: memory.store,
    embedder: memory.embedder,
    clock: memory.clock,
    prompts: memory.prompts,
    ...(memory.languageModel ? { languageModel: memory.languageModel } : {}),
    ...options,
  });
}

/** Through the strategy engine, as `memloom add` would, keeping the memory's fields and its time. */
async function mergeOne(memory: Memory, line: ExportLine, counts: ImportCounts, signal: AbortSignal | undefined): Promise<void> {
  const record = line.memory;
  const result = await memory.add(record.content, {
    scope: record.scope,
    category: record.category,
    type: record.type,
    importance: record.importance,
    source: record.source,
    verified: record.verified,
    sources: record.sources,
    tags: record.tags,
    metadata: record.metadata,
    ...(record.context !== undefined ? { context: record.context } : {}),
    at: record.updatedAt,
    trigger: 'import',
    // An abort stops a merge's model call in flight: the memory is not added, and a resumed import adds it.
    ...(signal ? { signal } : {}),
  });
  if (result.decision.strategy === 'merge_update') counts.merged++;
  else if (result.decision.strategy === 'keep_both') counts.kept++;
  else counts.created++;
}
