import { promises as fs } from 'node:fs';
import path from 'node:path';
import { documentVectors, MemloomError, scopeKey, type MemoryRecord, type MemoryVersion } from '@memloom/core';
import { isMissing, isTempName, readBytesIfExists, readIfExists, type Durability } from './atomic-file.js';
import { parseMemoryFile, type FileProblem, type ParsedFile } from './block-format.js';
import { storeError, writingWhileReading } from './errors.js';
import { decodeHistory, type VectorHeader } from './index-logs.js';
import { FOLDER_LINK_MESSAGE } from './linked-folders.js';
import { fileOrder, goneFiles, historyIds, isLinkSignature, listMarkdownFiles, loadAccess, loadDeletions, statSignature, syncVectors } from './loader.js';
import { decodeMarkdown } from './markdown-encoding.js';
import type { ResolvedOptions } from './options.js';
import { discoverScopes, shownPath, type FoundLink } from './scope-path.js';
import { recoverJournal } from './transaction.js';
import { accessFile, deletionFile, historyFile, MEMORY_FILE, vectorNorm, type Entry, type LayoutPart, type Plan, type ScopeState } from './world.js';
import { newScopeState } from './scope-state.js';

/** What a look at the files found and did. */
export interface SyncReport {
  /** Memories made from blocks written by hand. */
  created: string[];
  /** Memories whose block was changed by hand (a `manual_edit` version each). */
  edited: string[];
  /** Memories whose block was deleted by hand (their history and vector go HAND_DELETE_GRACE_MS later). */
  deleted: string[];
  /** Vectors the embedder made (hand-written blocks, a missing or rebuilt index). */
  embedded: number;
  /** Memories without a vector: no embedder was given, or it failed (see `embedderError`). */
  unembedded: string[];
  /**
   * The embedder's failure (EMBEDDER_ERROR, INVALID_EMBEDDING) when it failed on this look: the memories it
   * did not embed are taken in without a vector (in `unembedded`) and embedded at a later look. When it failed
   * on one block alone, the message names it and `details` holds `id` and `block` (`path:line`, or the path).
   */
  embedderError?: MemloomError;
  /** Files that cannot be read, with path and line; they are left as they are. */
  problems: FileProblem[];
  /** Other things worth knowing (a copied block given a new id, a file backed up while an interrupted write was finished). */
  notices: string[];
}

export interface ReconcilerParts {
  root: string;
  options: ResolvedOptions;
  durability: Durability;
  journalFile: string;
  entries: Map<string, Entry>;
  scopes: Map<string, ScopeState>;
  header: VectorHeader | undefined;
  newPlan: () => Plan;
  /** `operation` names the write in the error of one refused past its commit point. */
  commit: (plan: Plan, operation: string) => Promise<void>;
  dropScope: (state: ScopeState) => void;
}

interface ChangedFile {
  rel: string;
  signature: string;
  parsed: ParsedFile;
}

interface PendingScope {
  state: ScopeState;
  fresh: boolean;
  changed: ChangedFile[];
  removed: string[];
}

const EMBED_BATCH = 64;

/**
 * How long the history and vector of a memory whose block was deleted by hand are kept before they go
 * (ms of the store's clock). A look taken while an editor saves in place can see the file empty or cut short;
 * a block back within this time (the save landing) keeps them. After it, the first look that still finds no
 * block removes them.
 */
export const HAND_DELETE_GRACE_MS = 10_000;

/**
 * Whether a scope has hand deletions that a look would settle now: one has waited HAND_DELETE_GRACE_MS, and no
 * file of the scope is unreadable (such deletions wait until the file is fixed, a change that a look sees anyway:
 * the block may be in it). So reads do not take the lock for deletions that cannot go yet.
 */
export function deletionsDue(state: ScopeState, nowMs: number): boolean {
  if (state.deletions.size === 0) return false;
  if ([...state.files.values()].some((layout) => layout.problems.length > 0)) return false;
  return [...state.deletions.values()].some((atMs) => nowMs - atMs >= HAND_DELETE_GRACE_MS);
}

/** Options of one look at the files. */
export interface RunOptions {
  /** Embed every memory again and write the vector logs anew (rebuildIndex); old vectors stay if the embedder fails. */
  rewriteVectors?: boolean;
  /** Also try again to embed memories without a vector in unchanged scopes (after the embedder failed). */
  retryEmbedding?: boolean;
}

/**
 * Brings the store's state in line with the files: reads what changed,
 * tells blocks memloom wrote from blocks a person changed, wrote or
 * deleted, and commits those as versions (rewriting the files, with
 * backups, to record ids and revisions). Runs under the store lock.
 */
export class Reconciler {
  header: VectorHeader | undefined;
  /** Said in every report of this look, retries included: what recovering a crashed write did. */
  private readonly recoveryNotices: string[] = [];
  /** Folders of the layout (scope folders, `memory/`) found to be symbolic links by the last look: reported, not followed. */
  links: FoundLink[] = [];

  constructor(private readonly parts: ReconcilerParts) {
    this.header = parts.header;
  }

  async run(options: RunOptions): Promise<SyncReport> {
    const { parts } = this;
    const nowMs = parts.options.clock.now();
    const rebuild = options.rewriteVectors === true;
    const report: SyncReport = { created: [], edited: [], deleted: [], embedded: 0, unembedded: [], problems: [], notices: [] };
    const recovered = await recoverJournal(parts.journalFile, parts.durability, parts.options.clock.now());
    for (const { file, backup } of recovered.backups) {
      const message = `${this.display(file)} was changed after a write to it was interrupted; it was copied to ${this.display(backup)} before that write was finished`;
      this.recoveryNotices.push(message);
      parts.options.logger.warn?.(`[memloom] [markdown] ${message}`, { path: this.display(file), backup: this.display(backup) });
    }
    report.notices.push(...this.recoveryNotices);
    await sweepTemps(path.dirname(parts.journalFile), false);
    this.links = [];
    const found = discoverScopes(parts.root, this.links).sort((a, b) => (scopeKey(a.scope) < scopeKey(b.scope) ? -1 : 1));
    // Temp files are only ever written under the lock, which we hold: any left is from a killed writer.
    for (const item of found) if (recovered.outcome !== 'none' || !parts.scopes.has(scopeKey(item.scope))) await sweepTemps(item.directory, true);
    const foundKeys = new Set(found.map((item) => scopeKey(item.scope)));
    for (const state of [...parts.scopes.values()]) if (!foundKeys.has(state.key)) parts.dropScope(state);

    const unembedded = new Set<string>();
    if (options.retryEmbedding && parts.options.embedder) for (const entry of parts.entries.values()) if (!entry.vector) unembedded.add(entry.scopeKey);
    const pending: PendingScope[] = [];
    for (const item of found) {
      const key = scopeKey(item.scope);
      let state = parts.scopes.get(key);
      const fresh = !state;
      if (!state) {
        state = newScopeState(parts.root, item.scope);
        parts.scopes.set(key, state);
      }
      const listing = listMarkdownFiles(state.directory);
      const vectorsChanged = (await syncVectors(state, this.header)) || fresh;
      const accessChanged = fresh || statSignature(accessFile(state)) !== state.accessSignature;
      if (accessChanged) await loadAccess(state);
      if (fresh || statSignature(deletionFile(state)) !== state.deletionSignature) await loadDeletions(state);
      const changed: ChangedFile[] = [];
      for (const [rel, signature] of listing) {
        if (state.files.get(rel)?.signature === signature) continue;
        if (isLinkSignature(signature)) {
          changed.push({ rel, signature, parsed: linkedFile(state, rel) });
          continue;
        }
        const bytes = await readBytesIfExists(path.join(state.directory, rel));
        if (bytes === undefined) continue;
        const decoded = decodeMarkdown(bytes);
        const parsed = 'text' in decoded ? this.parse(state, rel, decoded.text) : unreadableFile(state, rel, decoded.line, decoded.message);
        changed.push({ rel, signature, parsed });
      }
      const removed = goneFiles(listing, state.files);
      const dueNow = deletionsDue(state, nowMs) || unembedded.has(key) || rebuild;
      if (fresh || changed.length > 0 || removed.length > 0 || vectorsChanged || accessChanged || dueNow) {
        pending.push({ state, fresh, changed: changed.sort((a, b) => fileOrder(a.rel, b.rel)), removed });
      }
    }
    if (pending.length === 0) {
      report.problems = this.allProblems();
      return report;
    }

    const plan = parts.newPlan();
    const nowIso = new Date(nowMs).toISOString();
    const changedKeys = new Set<string>();
    for (const item of pending) {
      for (const file of item.changed) changedKeys.add(fileKey(item.state.key, file.rel));
      for (const rel of item.removed) changedKeys.add(fileKey(item.state.key, rel));
    }
    const seen = new Set<string>();
    for (const [id, entry] of parts.entries) if (!changedKeys.has(fileKey(entry.scopeKey, entry.file))) seen.add(id);

    const adopted: Array<{ state: ScopeState; rel: string; record: MemoryRecord }> = [];
    const creates: Array<{ state: ScopeState; rel: string; record: MemoryRecord; line: number }> = [];
    // `last`: a block put back at an older revision than its memory's last version (see mayBeOlder), which that version is.
    const edits: Array<{ state: ScopeState; rel: string; record: MemoryRecord; previous: Entry | undefined; from: ScopeState | undefined; line: number; last?: MemoryRecord }> = [];
    const maybeOlder: Array<{ state: ScopeState; rel: string; record: MemoryRecord; previous: Entry | undefined; line: number }> = [];
    const brokenScopes = new Set<string>();
    // Memories with a history in a folder read for the first time, and where: see movedFrom.
    const histories = new Map<string, ScopeState[]>();
    for (const item of pending) {
      if (!item.fresh) continue;
      for (const id of await historyIds(item.state)) histories.set(id, [...(histories.get(id) ?? []), item.state]);
    }
    // Memories whose deletion by hand waits, and where (see movedFrom): gathered once, not walked per block.
    const waiting = new Map<string, ScopeState[]>();
    for (const state of parts.scopes.values()) for (const id of state.deletions.keys()) waiting.set(id, [...(waiting.get(id) ?? []), state]);
    const keepers = this.keepers(pending, histories);

    for (const item of pending) {
      const { state } = item;
      for (const file of item.changed) {
        const broken = file.parsed.problems.length > 0;
        if (broken) {
          brokenScopes.add(state.key);
          // Keep what this file held until a person fixes it: nothing in it is taken as deleted.
          for (const [id, entry] of parts.entries) if (entry.scopeKey === state.key && entry.file === file.rel) seen.add(id);
        }
        const layoutParts: LayoutPart[] = [];
        for (const segment of file.parsed.segments) {
          if (segment.kind === 'text') {
            layoutParts.push(segment);
            continue;
          }
          const { block } = segment;
          const id = block.record.id;
          // An id another folder's block keeps (see keepers): this block is a copy.
          const copy = block.status !== 'new' && keepers.has(id) && keepers.get(id) !== state.key;
          if (broken) {
            if (copy) continue;
            if (block.status === 'intact' && !seen.has(id)) adopted.push({ state, rel: file.rel, record: block.record });
            if (block.status !== 'new') seen.add(id);
            continue;
          }
          if (block.status === 'new' || seen.has(id) || copy) {
            if (block.status !== 'new') {
              report.notices.push(`${blockAt(state, file.rel, block.line)}: memory ${id} appears twice; this copy becomes a new memory`);
            }
            const record = { ...block.record, id: parts.options.generateId(), revision: 1 };
            creates.push({ state, rel: file.rel, record, line: block.line });
            seen.add(record.id);
            layoutParts.push({ kind: 'record', id: record.id });
            continue;
          }
          seen.add(id);
          layoutParts.push({ kind: 'record', id });
          const previous = parts.entries.get(id);
          const from = this.movedFrom(previous, block.record, state, histories, waiting);
          if (block.status === 'edited' || from) {
            edits.push({ state, rel: file.rel, record: block.record, previous, from, line: block.line });
          } else if (mayBeOlder(previous, block.record, state)) {
            maybeOlder.push({ state, rel: file.rel, record: block.record, previous, line: block.line });
          } else {
            adopted.push({ state, rel: file.rel, record: block.record });
          }
        }
        plan.adoptLayout(state, { rel: file.rel, signature: file.signature, parts: layoutParts, problems: file.parsed.problems });
      }
      for (const rel of item.removed) plan.removedFiles.push({ scope: state, rel });
      // Entries of unchanged files pick up vectors and access times other processes wrote.
      for (const entry of parts.entries.values()) {
        if (entry.scopeKey !== state.key || changedKeys.has(fileKey(entry.scopeKey, entry.file))) continue;
        plan.adoptEntry(this.withLogs(state, entry.file, entry.record));
      }
    }

    // A block older than its memory's last version (put back from backups/, or the whole file replaced by a backup) is
    // a hand edit of that version, numbered after it, so that version numbers stay unique; else it is taken as it is.
    for (const item of maybeOlder) {
      const last = (await this.historyTail(item.state, item.record.id)) ?? item.previous?.record;
      if (last && last.revision > item.record.revision) edits.push({ ...item, from: undefined, last });
      else adopted.push(item);
    }
    for (const { state, rel, record } of adopted) plan.adoptEntry(this.withLogs(state, rel, record));
    // A file that could not be read before and was not changed since keeps its scope's hand deletions waiting too.
    for (const { state } of pending) {
      for (const [rel, layout] of state.files) if (layout.problems.length > 0 && !changedKeys.has(fileKey(state.key, rel))) brokenScopes.add(state.key);
    }

    // Blocks that are gone from changed files were deleted by hand: the memories go now, their histories and
    // vectors once the deletion has held for HAND_DELETE_GRACE_MS (below).
    for (const [id, entry] of parts.entries) {
      if (changedKeys.has(fileKey(entry.scopeKey, entry.file)) && !seen.has(id)) {
        plan.deleteByHand(id, nowMs);
        report.deleted.push(id);
      }
    }
    // On a first read, history without a block means the block was deleted while no process ran (or the look
    // caught a file half saved): a deletion by hand like the others.
    for (const [id, found] of histories) {
      for (const state of found) {
        if (brokenScopes.has(state.key) || seen.has(id) || plan.entry(id) || plan.isPendingDeletion(state, id)) continue;
        plan.noteDeletion(state, id, nowMs);
        report.deleted.push(id);
      }
    }

    const vectors = await this.embedAll(
      [
        ...creates.map((item) => ({ record: item.record, block: blockAt(item.state, item.rel, item.line) })),
        ...edits
          .filter((item) => rebuild || needsNewVector(item.previous, item.record, item.state))
          .map((item) => ({ record: item.record, block: blockAt(item.state, item.rel, item.line) })),
        ...[...plan.entries.values()].flatMap((entry) =>
          entry && (rebuild || !entry.vector) ? [{ record: entry.record, block: blockAt(this.parts.scopes.get(entry.scopeKey) as ScopeState, entry.file) }] : [],
        ),
      ],
      report,
    );

    for (const { state, rel, record, line } of creates) {
      const version = versionOf(null, record, 'create', `written by hand in ${state.displayPath}/${rel} (line ${line})`, nowIso);
      plan.put(record, version, vectors.get(record.id), state, rel);
      report.created.push(record.id);
    }
    for (const { state, rel, record, previous, from, line, last } of edits) {
      // A copy older than the block (another store wrote it since) is no `before`: the history is.
      const known = previous && previous.record.revision >= record.revision ? previous : undefined;
      const before = last ?? known?.record ?? (await this.historyTail(from ?? state, record.id)) ?? previous?.record ?? null;
      const after: MemoryRecord = { ...record, scope: { ...state.scope }, revision: Math.max(before?.revision ?? 0, record.revision) + 1 };
      // A block moved while no store ran: its history comes from the folder it was left in (a known block's moves along by itself).
      if (from && !previous) plan.moveHistory(from, state, record.id);
      const where = `${state.displayPath}/${rel} (line ${line})`;
      const reason = from ? `moved by hand to ${where}` : last ? `revision ${record.revision} put back by hand in ${where}` : `edited by hand in ${where}`;
      const fresh = vectors.get(record.id);
      const vector = fresh ?? (needsNewVector(previous, record, state) ? undefined : 'keep');
      plan.put(after, versionOf(before, after, 'edit', reason, nowIso), vector, state, rel);
      report.edited.push(record.id);
    }
    for (const [id, entry] of plan.entries) {
      if (entry && (rebuild || !entry.vector) && vectors.has(id) && !report.created.includes(id) && !report.edited.includes(id)) {
        plan.setVector(id, vectors.get(id) as Float32Array);
      }
    }
    // Written whole from the entries, which keep the vectors they had where the embedder failed.
    if (rebuild) for (const item of pending) plan.vectorRewrites.add(item.state);
    this.settleDeletions(plan, pending, seen, brokenScopes, nowMs);
    if (!this.header && this.parts.options.embedder && vectors.size > 0) {
      this.header = { embedderId: this.parts.options.embedder.id, dimension: this.parts.options.embedder.dimension };
    }

    // What a person changed (and hand deletions whose wait is over) is written as versions.
    const recording = 'cannot record the changes made to the memory files';
    await writingWhileReading(recording, () => parts.commit(plan, recording));
    report.problems = this.allProblems();
    for (const entry of parts.entries.values()) if (!entry.vector && !report.unembedded.includes(entry.record.id)) report.unembedded.push(entry.record.id);
    return report;
  }

  /**
   * Where an id is in more than one block of the files read (a block copied by hand), which folder's block
   * keeps it: the one in the scope that holds the memory, as this process knows it or, on a first read, by
   * its history. The others become new memories. Ids without such a block are left out: the first block read
   * keeps them, as a block in a file not read again (already known) does.
   */
  private keepers(pending: PendingScope[], histories: Map<string, ScopeState[]>): Map<string, string> {
    const places = new Map<string, string[]>();
    for (const item of pending) {
      for (const file of item.changed) {
        for (const segment of file.parsed.segments) {
          if (segment.kind !== 'block' || segment.block.status === 'new') continue;
          const id = segment.block.record.id;
          places.set(id, [...(places.get(id) ?? []), item.state.key]);
        }
      }
    }
    const keepers = new Map<string, string>();
    for (const [id, keys] of places) {
      if (keys.length < 2) continue;
      const homes = [this.parts.entries.get(id)?.scopeKey, ...(histories.get(id) ?? []).map((state) => state.key)];
      const home = homes.find((key) => key !== undefined && keys.includes(key));
      if (home !== undefined) keepers.set(id, home);
    }
    return keepers;
  }

  /**
   * Pending hand deletions of the scopes looked at: a memory whose block is back (anywhere) keeps its history
   * and vector; one still gone HAND_DELETE_GRACE_MS after its deletion was first seen loses them. A scope with
   * a file that cannot be read waits: the block may be in it.
   */
  private settleDeletions(plan: Plan, pending: PendingScope[], seen: Set<string>, brokenScopes: Set<string>, nowMs: number): void {
    for (const { state } of pending) {
      for (const [id, atMs] of plan.pendingDeletions(state)) {
        if (plan.entry(id)) plan.noteDeletion(state, id, null);
        else if (!brokenScopes.has(state.key) && !seen.has(id) && nowMs - atMs >= HAND_DELETE_GRACE_MS) plan.forget(state, id);
      }
    }
  }

  /**
   * The scope a block in `state` was moved out of by hand, if it was. A store that moves a memory moves
   * its history along; a person leaves it behind. So a block this process holds in another scope was
   * moved by hand, unless it is a newer revision whose history has left that scope: then another store
   * wrote it there, and it is taken as it is. A block met for the first time was moved by hand when its
   * history is in another folder, read for the first time or waiting there as a deletion by hand (a block cut
   * from one file and pasted into another in two saves).
   */
  private movedFrom(
    previous: Entry | undefined,
    record: MemoryRecord,
    state: ScopeState,
    histories: Map<string, ScopeState[]>,
    waiting: Map<string, ScopeState[]>,
  ): ScopeState | undefined {
    if (!previous) return histories.get(record.id)?.find((other) => other !== state) ?? waiting.get(record.id)?.find((other) => other !== state);
    if (previous.scopeKey === state.key) return undefined;
    const origin = this.parts.scopes.get(previous.scopeKey) as ScopeState;
    const byAnotherStore = record.revision > previous.record.revision && statSignature(historyFile(origin, record.id)) === undefined;
    return byAnotherStore ? undefined : origin;
  }

  /** A path under the root, as messages show it. */
  private display(file: string): string {
    return shownPath(this.parts.root, file);
  }

  private parse(state: ScopeState, rel: string, text: string): ParsedFile {
    return parseMemoryFile(text, {
      path: blockAt(state, rel),
      scope: state.scope,
      defaults: { category: rel === MEMORY_FILE ? 'fact' : 'episode', atIso: new Date(this.parts.options.clock.now()).toISOString() },
    });
  }

  /**
   * An entry for a record read from disk, with its logged vector and access time. A vector made for a later
   * revision than the block's is another text's (the block was put back from a backup): none, it is embedded again.
   */
  private withLogs(state: ScopeState, rel: string, record: MemoryRecord): Entry {
    const access = state.access.get(record.id);
    const withAccess = access && access.revision === record.revision ? { ...record, lastAccessedAt: access.at } : record;
    const logged = state.vectors.get(record.id);
    const vector = logged && logged.revision <= record.revision ? logged.vector : undefined;
    return { record: withAccess, vector, norm: vectorNorm(vector), scopeKey: state.key, file: rel, seq: 0 };
  }

  /** `block` says where each record's block is (`path:line`, or the file alone), for an error about it. */
  private async embedAll(items: Array<{ record: MemoryRecord; block: string }>, report: SyncReport): Promise<Map<string, Float32Array>> {
    const vectors = new Map<string, Float32Array>();
    const unique = [...new Map(items.map((item) => [item.record.id, item])).values()];
    if (unique.length === 0) return vectors;
    const embedder = this.parts.options.embedder;
    if (!embedder || (this.header && (this.header.embedderId !== embedder.id || this.header.dimension !== embedder.dimension))) {
      return vectors;
    }
    // A batch that fails may fail for one of its texts: a vector of zeros (core's INVALID_EMBEDDING with
    // details.zeros) is that text's answer, and an embedder that throws may refuse one text (too long, filtered).
    // Such a batch is embedded one by one, and only the blocks that fail alone wait without a vector, the error
    // naming the block. Output that is wrong for any text (the wrong dimension) stops the look, and so do two texts
    // that throw alone with none embedded between them (more likely the embedder is down, so it is not asked once per block): what is left
    // is taken in without a vector, as with no embedder, and embedded at a later look (see MarkdownFileStore.refresh).
    const zeros = (error: unknown) => MemloomError.hasCode(error, 'INVALID_EMBEDDING') && (error.details as { zeros?: unknown } | undefined)?.zeros === true;
    const wrongOutput = (error: unknown) => MemloomError.hasCode(error, 'INVALID_EMBEDDING') && !zeros(error);
    const attempt = async (batch: typeof unique): Promise<{ output: number[][] } | { error: unknown }> => {
      try {
        // Content and context blended as core does on add, so a rebuilt vector equals the one the Memory wrote.
        return { output: await documentVectors(embedder, batch.map((item) => item.record), this.parts.options.contextWeight) };
      } catch (error) {
        return { error };
      }
    };
    const keep = (batch: typeof unique, output: number[][]) => batch.forEach((item, index) => vectors.set(item.record.id, Float32Array.from(output[index] as number[])));
    let thrownInARow = 0;
    embedding: for (let start = 0; start < unique.length; start += EMBED_BATCH) {
      const batch = unique.slice(start, start + EMBED_BATCH);
      const whole = await attempt(batch);
      if ('output' in whole) {
        keep(batch, whole.output);
        thrownInARow = 0;
        continue;
      }
      if (wrongOutput(whole.error)) {
        report.embedderError = embedError(whole.error, embedder.id);
        break;
      }
      for (const item of batch) {
        const alone = batch.length === 1 ? whole : await attempt([item]);
        if ('output' in alone) {
          keep([item], alone.output);
          thrownInARow = 0;
          continue;
        }
        if (wrongOutput(alone.error) || (!zeros(alone.error) && ++thrownInARow >= 2)) {
          report.embedderError = embedError(alone.error, embedder.id);
          break embedding;
        }
        report.embedderError = embedError(alone.error, embedder.id, item);
      }
    }
    report.embedded += vectors.size;
    return vectors;
  }

  private async historyTail(state: ScopeState, id: string): Promise<MemoryRecord | undefined> {
    const text = await readIfExists(historyFile(state, id));
    return text === undefined ? undefined : decodeHistory(text).versions.at(-1)?.after;
  }

  /** Every problem of the files and linked folders, each with the scope whose memories it may hide. */
  private allProblems(): FileProblem[] {
    const problems: FileProblem[] = this.links.map(({ path: link, scope, innerKeys, hashed }) => ({
      path: this.display(link),
      line: 1,
      message: FOLDER_LINK_MESSAGE,
      scope: { ...scope },
      ...(innerKeys.length > 0 ? { innerKeys: [...innerKeys] } : {}),
      ...(hashed ? { hashed: { ...hashed } } : {}),
    }));
    for (const state of this.parts.scopes.values()) {
      for (const layout of state.files.values()) problems.push(...layout.problems.map((problem) => ({ ...problem, scope: { ...state.scope } })));
    }
    return problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  }
}

/** Remove temp files a killed writer left in `directory` (and its subfolders when `deep`). */
async function sweepTemps(directory: string, deep: boolean): Promise<void> {
  let entries;
  try {
    entries = await fs.readdir(directory, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  for (const entry of entries) {
    const full = path.join(directory, entry.name);
    if (entry.isFile() && isTempName(entry.name)) await writingWhileReading('cannot remove the temp files of a killed writer', () => fs.rm(full, { force: true }));
    else if (deep && entry.isDirectory()) await sweepTemps(full, true);
  }
}

/**
 * A Markdown file (or a month folder of daily notes) that is a symbolic link, as a file that cannot be read:
 * reported, never written, and nothing in it taken as deleted. Following a file link would be fine for reading,
 * but every write replaces the file by renaming a new one over it, which would turn the link into a plain file.
 */
function linkedFile(state: ScopeState, rel: string): ParsedFile {
  const message = rel.endsWith('.md')
    ? 'is a symbolic link; memloom does not read or write Markdown files through links (a write would replace the link with a plain file). Put the file itself here'
    : FOLDER_LINK_MESSAGE;
  return unreadableFile(state, rel, 1, message);
}

/** A file reported as it is, with no block read from it (a link, a file not in UTF-8). */
function unreadableFile(state: ScopeState, rel: string, line: number, message: string): ParsedFile {
  return { segments: [], problems: [{ path: blockAt(state, rel), line, message }] };
}

/**
 * Whether an intact block may be older than its memory's last version (put back from backups/): this process
 * holds a later revision, or the logs name one (a vector or an access time), or its deletion by hand waits. Cheap
 * signs, so that only such blocks have their history read (see run); the history decides.
 */
function mayBeOlder(previous: Entry | undefined, record: MemoryRecord, state: ScopeState): boolean {
  if (previous) return previous.record.revision > record.revision;
  const logged = Math.max(state.vectors.get(record.id)?.revision ?? 0, state.access.get(record.id)?.revision ?? 0);
  return logged > record.revision || state.deletions.has(record.id);
}

/** A block's vector is made again when its content or context changed (both go into it), or it has none. */
function needsNewVector(previous: Entry | undefined, record: MemoryRecord, state: ScopeState): boolean {
  return !previous || previous.record.content !== record.content || previous.record.context !== record.context || !state.vectors.has(record.id);
}

/**
 * The embedder's failure (EMBEDDER_ERROR) or unusable output (INVALID_EMBEDDING), named as this store's; when it
 * failed on one block alone, naming that block (its memory id, and its file and line in `details`).
 */
function embedError(error: unknown, embedderId: string, alone?: { record: MemoryRecord; block: string }): MemloomError {
  const code = MemloomError.hasCode(error, 'INVALID_EMBEDDING') ? 'INVALID_EMBEDDING' : 'EMBEDDER_ERROR';
  const why = (error instanceof Error ? error.message : String(error)).replace(/^\[memloom\] (\[[^\]]*\] )?/u, '');
  const which = alone ? ` (memory ${alone.record.id} in ${alone.block})` : '';
  return storeError(code, `embedding memories read from the Markdown with ${embedderId}${which}: ${why}`, alone ? { id: alone.record.id, block: alone.block } : undefined, error);
}

function versionOf(before: MemoryRecord | null, after: MemoryRecord, action: 'create' | 'edit', reason: string, atIso: string): MemoryVersion {
  return {
    memoryId: after.id,
    version: after.revision,
    at: atIso,
    trigger: 'manual_edit',
    action,
    reason,
    before: before ? structuredClone(before) : null,
    after: structuredClone(after),
  };
}

function fileKey(scope: string, rel: string): string {
  return `${scope}\u0000${rel}`;
}

/** Where a file of a scope is, as messages show it (`<scope folder>/<file>`), and the line of a block in it. */
function blockAt(state: ScopeState, rel: string, line?: number): string {
  return `${state.displayPath}/${rel}${line === undefined ? '' : `:${line}`}`;
}
