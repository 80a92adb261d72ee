import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import {
  assertDeleteScope,
  assertQueryInput,
  assertQueryScope,
  inScope,
  jsonCopy,
  listRecords,
  matchingRecords,
  missingStoreError,
  pageRecords,
  scopeKey,
  searchTextIndex,
  TextIndex,
  type ListQuery,
  type MemloomError,
  type MemoryChange,
  type MemoryFilter,
  type MemoryPage,
  type MemoryRecord,
  type MemoryStore,
  type MemoryVersion,
  type PageQuery,
  type PolicyStorage,
  type Scope,
  type ScoredMemory,
  type StoreOpenOptions,
  type TextQuery,
  type VectorQuery,
} from '@memloom/core';
import { appendDurable, readIfExists, removeEmptyFolders, writeFileAtomic, type Durability } from './atomic-file.js';
import type { FileProblem } from './block-format.js';
import { BACKEND, guarded, ioError, RetrySignal, storeError, writeError } from './errors.js';
import { FileLock } from './file-lock.js';
import { decodeHistory, encodeAccess, type VectorHeader } from './index-logs.js';
import { goneFiles, listMarkdownFiles, statSignature } from './loader.js';
import { resolveOptions, type MarkdownStoreOptions, type ResolvedOptions } from './options.js';
import { createMarkdownPolicyStorage } from './policy-storage.js';
import { nearest } from './queries.js';
import { deletionsDue, Reconciler, type RunOptions, type SyncReport } from './reconcile.js';
import { assertSafeScope, discoverScopes, mayHoldMemoriesOf, memoryDirectory, shownPath, type FoundLink } from './scope-path.js';
import { newScopeState } from './scope-state.js';
import { checkDimension, checkHeader, pickHeader, readStoreFile, STORE_FORMAT, validateChange } from './store-file.js';
import { commitPlan, newTransaction } from './commit.js';
import type { Transaction } from './transaction.js';
import { accessFile, historyFile, Plan, vectorFile, type Entry, type ScopeState } from './world.js';

/** A memloom store over Markdown files, plus what only a file store can do. */
export interface MarkdownStore extends MemoryStore {
  /** The folder given as `root`. */
  readonly root: string;
  /** BM25 over core's tokenizer; always present here. */
  textSearch(query: TextQuery): Promise<ScoredMemory[]>;
  /**
   * Look at the files now: pick up a person's edits (changed blocks become
   * `manual_edit` versions, deleted blocks deletions, new blocks new
   * memories), embed what lacks a vector, and report unreadable files. An
   * embedder that fails is reported in `embedderError`, not thrown.
   */
  sync(): Promise<SyncReport>;
  /**
   * Embed all memories again from the Markdown and write the vector logs anew (needs `embedder`). An
   * embedder that fails is reported in `embedderError`; the vectors it did not remake are kept.
   */
  rebuildIndex(): Promise<SyncReport>;
  /**
   * Problems found in the files by the last look at them (path, line, message, scope). With a scope, those
   * that can hide memories of that scope, as `list({ scope })` reads it: the files of the scope and of the scopes
   * inside it, and the folders of the layout that are symbolic links and may hold such scopes (by their place:
   * `users/alice` those of alice and inside hers, `users/` every user's; see `FileProblem.innerKeys`).
   */
  problems(scope?: Scope): FileProblem[];
  /** Seed 001's policy overrides file and snapshots for one scope. */
  policyStorage(scope?: Scope): PolicyStorage;
  /** Absolute path of a scope's `memory/` folder (the scope is validated first). */
  directoryFor(scope: Scope): string;
}

/**
 * Create a store whose source of truth is Markdown a person can read, edit
 * and keep in git (seed 001's layout), with a derived search index in
 * hidden folders. Options are validated at once (INVALID_OPTIONS).
 */
export function createMarkdownStore(options: MarkdownStoreOptions): MarkdownStore {
  return new MarkdownFileStore(resolveOptions(options));
}

const MAX_RETRIES = 8;
const WRITE_CHANGES = 'cannot write the changes';
const DELETE_SCOPE = 'cannot delete the scope';
/** After the embedder failed, reads try again to embed what it left at most this often (ms of the store's clock); sync() always does. */
const EMBED_RETRY_MS = 30_000;

class MarkdownFileStore implements MarkdownStore {
  readonly name = BACKEND;
  readonly capabilities = { textSearch: true, persistent: true, multiProcess: true, listPage: true, listAfter: true };
  readonly root: string;
  readonly options: ResolvedOptions;
  readonly durability: Durability;
  readonly stateDirectory: string;
  private readonly lock: FileLock;
  readonly entries = new Map<string, Entry>();
  readonly scopes = new Map<string, ScopeState>();
  readonly text = new TextIndex();
  header: VectorHeader | undefined;
  lastSeq = 0;
  private loaded = false;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  private currentProblems: FileProblem[] = [];
  /** Linked scope folders the last look found (reported, not followed), to tell when they change. */
  private linkedFolders: string[] = [];
  /** When reads try the embedder again after it failed (the store's clock); never when it did not fail. */
  private embedRetryAt = Number.POSITIVE_INFINITY;

  constructor(options: ResolvedOptions) {
    this.options = options;
    this.root = path.resolve(options.root);
    this.durability = { fsync: options.fsync };
    this.stateDirectory = path.join(this.root, '.memloom');
    this.lock = new FileLock(path.join(this.stateDirectory, 'lock'), {
      timeoutMs: options.lockTimeoutMs,
      staleMs: options.lockStaleMs,
    });
  }

  // -------------------------------------------------------------------------
  // open / close
  // -------------------------------------------------------------------------

  async open(options: StoreOpenOptions): Promise<void> {
    this.assertOpen();
    const embedder = this.options.embedder;
    if (embedder && (embedder.id !== options.embedderId || embedder.dimension !== options.dimension)) {
      throw storeError(
        'EMBEDDER_MISMATCH',
        `the store's embedder option is ${embedder.id} (${embedder.dimension} dims) but it is opened for ${options.embedderId} (${options.dimension} dims); give both the same embedder`,
      );
    }
    await this.exclusive(async () => {
      const stored = await this.readStoreFile();
      const current = stored ?? this.header;
      if (current) checkHeader(current, options);
      if (!stored) await writeFileAtomic(this.storeFile, JSON.stringify({ format: STORE_FORMAT, ...pickHeader(options) }, null, 2), this.durability);
      const changed = !this.header || this.header.embedderId !== options.embedderId || this.header.dimension !== options.dimension;
      this.header = pickHeader(options);
      if (changed && this.loaded) this.reset();
      await this.refresh();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue.catch(() => undefined);
    this.closed = true;
  }

  // -------------------------------------------------------------------------
  // reads
  // -------------------------------------------------------------------------

  async get(id: string): Promise<MemoryRecord | undefined> {
    await this.fresh();
    const entry = this.entries.get(id);
    return entry ? structuredClone(entry.record) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<MemoryRecord[]> {
    assertQueryInput({ ids }, 'getMany', BACKEND);
    await this.fresh();
    return ids.flatMap((id) => {
      const entry = this.entries.get(id);
      return entry ? [structuredClone(entry.record)] : [];
    });
  }

  async list(query: ListQuery): Promise<MemoryRecord[]> {
    assertQueryScope(query, 'list', BACKEND);
    await this.fresh();
    return listRecords(this.entries.values(), query, BACKEND);
  }

  async listPage(query: PageQuery): Promise<MemoryPage> {
    assertQueryScope(query, 'listPage', BACKEND);
    await this.fresh();
    return pageRecords(this.entries.values(), query, BACKEND);
  }

  async count(query: { scope?: Scope; filter?: MemoryFilter }): Promise<number> {
    assertQueryScope(query, 'count', BACKEND);
    await this.fresh();
    return matchingRecords(this.entries.values(), query.scope, query.filter).length;
  }

  async vectorSearch(query: VectorQuery): Promise<ScoredMemory[]> {
    assertQueryScope(query, 'vectorSearch', BACKEND);
    assertQueryInput({ limit: query.limit, vector: query.vector }, 'vectorSearch', BACKEND);
    await this.fresh();
    checkDimension(this.header, query.vector);
    return nearest(this.entries.values(), query);
  }

  async textSearch(query: TextQuery): Promise<ScoredMemory[]> {
    assertQueryScope(query, 'textSearch', BACKEND);
    assertQueryInput({ limit: query.limit, text: query.text }, 'textSearch', BACKEND);
    await this.fresh();
    return searchTextIndex(this.text, this.entries, query);
  }


  async history(id: string): Promise<MemoryVersion[]> {
    await this.fresh();
    const entry = this.entries.get(id);
    if (!entry) return [];
    const scope = this.scopes.get(entry.scopeKey) as ScopeState;
    const file = historyFile(scope, id);
    const text = await guarded(`cannot read the history of memory ${id}`, () => readIfExists(file));
    if (text === undefined) return [];
    const { versions, badLine } = decodeHistory(text);
    if (badLine !== undefined) {
      throw storeError('STORE_CORRUPT', `history file ${this.display(file)} cannot be read at line ${badLine}`, {
        path: this.display(file),
        line: badLine,
      });
    }
    // Lines past the current revision belong to a write that has not committed yet.
    return versions.filter((version) => version.version <= entry.record.revision);
  }

  async getVector(id: string): Promise<number[] | undefined> {
    await this.fresh();
    const vector = this.entries.get(id)?.vector;
    return vector ? Array.from(vector) : undefined;
  }

  problems(scope?: Scope): FileProblem[] {
    if (scope !== undefined) assertQueryScope({ scope }, 'problems', BACKEND);
    return this.currentProblems
      .filter((problem) => mayHoldMemoriesOf(problem.scope, problem.innerKeys ?? [], scope, problem.hashed))
      .map((problem) => structuredClone(problem));
  }

  directoryFor(scope: Scope): string {
    return memoryDirectory(this.root, assertSafeScope(scope));
  }

  policyStorage(scope: Scope = {}): PolicyStorage {
    return createMarkdownPolicyStorage({
      root: this.root,
      scope,
      clock: this.options.clock,
      fsync: this.options.fsync,
      lockTimeoutMs: this.options.lockTimeoutMs,
      lockStaleMs: this.options.lockStaleMs,
    });
  }

  // -------------------------------------------------------------------------
  // writes
  // -------------------------------------------------------------------------

  async apply(changes: readonly MemoryChange[]): Promise<void> {
    this.assertOpen();
    if (!Array.isArray(changes)) throw storeError('INVALID_INPUT', 'apply needs an array of changes');
    const scopes = changes.map((change) => validateChange(change, this.header));
    if (changes.length === 0) return;
    await this.exclusive(async () => {
      for (let attempt = 0; ; attempt++) {
        await this.refresh();
        const plan = this.newPlan();
        for (const [index, change] of changes.entries()) this.planChange(plan, change, scopes[index]);
        try {
          await this.commit(plan, WRITE_CHANGES);
          return;
        } catch (error) {
          if (!(error instanceof RetrySignal) || attempt >= MAX_RETRIES) throw writeError(error, WRITE_CHANGES);
        }
      }
    });
  }

  async deleteByScope(scope: Scope): Promise<number> {
    this.assertOpen();
    assertDeleteScope(scope, BACKEND);
    return this.exclusive(async () => {
      await this.refresh();
      // The whole memory/ folder goes: a file in it that cannot be read would go unread, one behind a link would stay.
      const problems = this.problems(scope);
      const first = problems[0];
      if (first) {
        const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
        throw storeError(
          'STORE_CORRUPT',
          `${DELETE_SCOPE}: ${first.path}:${first.line}: ${first.message}${more}. Nothing was deleted: fix it (it is left as it is), or move it out of the store, and delete the scope again`,
          { scope, problems },
        );
      }
      const doomed = [...this.scopes.values()].filter((state) => inScope(state.scope, scope));
      const ids = [...this.entries.values()].filter((entry) => doomed.some((state) => state.key === entry.scopeKey));
      if (doomed.length === 0) return 0;
      // The whole memory/ folder goes: Markdown, backups (they hold the text), history, index, policy.
      const transaction = this.newTransaction();
      for (const state of doomed) transaction.remove(state.directory);
      await guarded(DELETE_SCOPE, () => transaction.commit(DELETE_SCOPE), writeError);
      for (const state of doomed) {
        this.dropScope(state);
        await removeEmptyFolders(path.dirname(state.directory), this.root);
      }
      return ids.length;
    });
  }

  async touch(ids: readonly string[], at: string): Promise<void> {
    this.assertOpen();
    assertQueryInput({ ids, at }, 'touch', BACKEND);
    if (ids.length === 0) return;
    await this.exclusive(async () => {
      await this.refresh();
      const byScope = new Map<ScopeState, string[]>();
      for (const id of new Set(ids)) {
        const entry = this.entries.get(id);
        if (!entry) continue;
        const scope = this.scopes.get(entry.scopeKey) as ScopeState;
        const lines = byScope.get(scope) ?? [];
        lines.push(encodeAccess(id, entry.record.revision, at));
        byScope.set(scope, lines);
      }
      for (const [scope, lines] of byScope) {
        scope.accessSignature = await guarded('cannot record the access time', () => appendDurable(accessFile(scope), lines.join(''), this.durability), writeError);
        scope.accessLines += lines.length;
        for (const id of new Set(ids)) {
          const entry = this.entries.get(id);
          if (!entry || entry.scopeKey !== scope.key) continue;
          scope.access.set(id, { revision: entry.record.revision, at });
          entry.record = { ...entry.record, lastAccessedAt: at };
        }
        if (scope.accessLines > 2 * scope.access.size + 1000) await this.compactAccess(scope);
      }
    });
  }

  async sync(): Promise<SyncReport> {
    this.assertOpen();
    return this.exclusive(() => this.refresh({ retryEmbedding: true }));
  }

  async rebuildIndex(): Promise<SyncReport> {
    this.assertOpen();
    if (!this.options.embedder) {
      throw storeError('NOT_SUPPORTED', 'rebuildIndex needs the embedder option: vectors are made from the Markdown by it');
    }
    return this.exclusive(() => this.refresh({ rewriteVectors: true }));
  }

  // -------------------------------------------------------------------------
  // reading the files
  // -------------------------------------------------------------------------

  /** Make sure what reads see matches the files (every `checkIntervalMs`). */
  private async fresh(): Promise<void> {
    this.assertOpen();
    if (!this.loaded) {
      await this.exclusive(() => this.refresh());
      return;
    }
    const now = performance.now();
    if (now - this.lastCheck < this.options.checkIntervalMs) return;
    const changed = await guarded('cannot look at the memory files', async () => this.somethingDue() || (await this.changedOnDisk()));
    if (changed) await this.exclusive(() => this.refresh());
    this.lastCheck = now;
  }

  /** A cheap look (directory listings and stats, no reading) for anything that changed. */
  private async changedOnDisk(): Promise<boolean> {
    if (statSignature(this.journalFile) !== undefined) return true;
    const links: FoundLink[] = [];
    const found = discoverScopes(this.root, links);
    if (found.length !== this.scopes.size || links.map((link) => link.path).join('\n') !== this.linkedFolders.join('\n')) return true;
    for (const { scope } of found) {
      const state = this.scopes.get(scopeKey(scope));
      if (!state) return true;
      const files = listMarkdownFiles(state.directory);
      for (const [rel, signature] of files) if (state.files.get(rel)?.signature !== signature) return true;
      if (goneFiles(files, state.files).length > 0) return true;
      if (statSignature(accessFile(state)) !== state.accessSignature) return true;
      // Vectors another process wrote (it embedded blocks this one could not, or rebuilt the index).
      if (statSignature(vectorFile(state)) !== state.vectorSignature) return true;
    }
    return false;
  }

  /**
   * Work a look at the files has to do even when nothing changed: an embedding to try again, hand deletions whose
   * wait is over (not those of a scope with a file that cannot be read: they wait for a change to it).
   */
  private somethingDue(): boolean {
    const now = this.options.clock.now();
    if (now >= this.embedRetryAt) return true;
    return [...this.scopes.values()].some((state) => deletionsDue(state, now));
  }

  /** Read what changed on disk and take in a person's edits. Runs under the lock. */
  private async refresh(options: RunOptions = {}): Promise<SyncReport> {
    const retryEmbedding = options.retryEmbedding || this.options.clock.now() >= this.embedRetryAt;
    // Before open(), the embedder the store.json names: what this look writes to the vector logs (a tombstone among them) is checked against it.
    this.header ??= await this.readStoreFile();
    const reconciler = new Reconciler({
      root: this.root,
      options: this.options,
      durability: this.durability,
      journalFile: this.journalFile,
      entries: this.entries,
      scopes: this.scopes,
      header: this.header,
      newPlan: () => this.newPlan(),
      commit: (plan, operation) => this.commit(plan, operation),
      dropScope: (state) => this.dropScope(state),
    });
    let report: SyncReport;
    for (let attempt = 0; ; attempt++) {
      try {
        report = await reconciler.run({ ...options, retryEmbedding });
        break;
      } catch (error) {
        if (!(error instanceof RetrySignal) || attempt >= MAX_RETRIES) throw ioError(error, 'cannot read the memory files');
      }
    }
    if (!this.header && reconciler.header) this.header = reconciler.header;
    this.linkedFolders = reconciler.links.map((link) => link.path);
    this.loaded = true;
    this.lastCheck = performance.now();
    this.currentProblems = report.problems;
    for (const problem of report.problems) this.options.logger.warn?.(`[memloom] [markdown] ${problem.path}:${problem.line}: ${problem.message}`, { ...problem });
    if (report.embedderError) {
      this.embedRetryAt = this.options.clock.now() + EMBED_RETRY_MS;
      this.options.logger.warn?.(
        `${report.embedderError.message}; ${report.unembedded.length} memories have no vector for now, and the store tries again at a later read`,
        { ids: report.unembedded, error: report.embedderError },
      );
      return report;
    }
    // A look that did not try everything again (it read a change elsewhere) leaves the retry where it was.
    if (retryEmbedding) this.embedRetryAt = Number.POSITIVE_INFINITY;
    if (report.unembedded.length > 0) {
      const what = this.options.embedder ? 'the store embeds them at a later read' : 'give the store an embedder to make them';
      this.options.logger.warn?.(
        `[memloom] [markdown] ${report.unembedded.length} memories have no vector; ${what}`,
        { ids: report.unembedded },
      );
    }
    return report;
  }

  // -------------------------------------------------------------------------
  // planning and committing
  // -------------------------------------------------------------------------

  private planChange(plan: Plan, change: MemoryChange, scope: Scope | undefined): void {
    if (change.op === 'delete') {
      const current = plan.entry(change.id);
      if (change.expectedRevision !== undefined && current?.record.revision !== change.expectedRevision) throw this.conflict(change.id);
      if (current) plan.delete(change.id);
      return;
    }
    const current = plan.entry(change.memory.id);
    // The numbering was checked before planning (validateChange).
    if ((current?.record.revision ?? 0) !== change.expectedRevision) throw this.conflict(change.memory.id);
    const { memory, version } = change;
    if (!current && change.vector === undefined) {
      throw storeError('INVALID_INPUT', `memory ${change.memory.id} is new and needs a vector`);
    }
    if (change.vector) {
      // Which embedder made the vector is only known from open() (or a store.json another process wrote).
      if (!this.header) throw storeError('INVALID_INPUT', 'the store has no vector dimension yet; call open() first');
      checkDimension(this.header, change.vector);
    }
    // A memory put anew over one deleted by hand that still waits starts a new history (as after an apply delete).
    if (!current) for (const state of this.scopes.values()) if (plan.isPendingDeletion(state, memory.id)) plan.forget(state, memory.id);
    const state = this.scopeState(scope ?? {});
    // Kept as the file gives it back after a reopen: a key holding undefined (a context) left out, -0 as 0.
    const record = jsonCopy({ ...change.memory, scope: { ...(scope ?? {}) } });
    const vector = change.vector ? Float32Array.from(change.vector) : 'keep';
    plan.put(record, structuredClone(change.version), vector, state);
  }

  /** Write a plan: Markdown through temp files with a backup of each overwritten file, logs, journal. */
  private commit(plan: Plan, operation: string): Promise<void> {
    return commitPlan(this, plan, operation);
  }

  private newPlan(): Plan {
    return new Plan(this.entries, (key) => this.scopes.get(key) as ScopeState);
  }

  private newTransaction(): Transaction {
    return newTransaction(this);
  }

  /** The state of a scope, registered (empty) when it has no folder yet. */
  private scopeState(scope: Scope): ScopeState {
    const key = scopeKey(scope);
    let state = this.scopes.get(key);
    if (!state) {
      state = newScopeState(this.root, scope);
      this.scopes.set(key, state);
    }
    return state;
  }

  private dropScope(state: ScopeState): void {
    for (const [id, entry] of this.entries) {
      if (entry.scopeKey !== state.key) continue;
      this.entries.delete(id);
      this.text.delete(id);
    }
    this.scopes.delete(state.key);
  }

  private reset(): void {
    for (const id of this.entries.keys()) this.text.delete(id);
    this.entries.clear();
    this.scopes.clear();
    this.loaded = false;
  }

  private async compactAccess(scope: ScopeState): Promise<void> {
    const lines = [...scope.access].filter(([id]) => this.entries.has(id)).map(([id, entry]) => encodeAccess(id, entry.revision, entry.at));
    await guarded('cannot record the access time', () => writeFileAtomic(accessFile(scope), lines.join(''), this.durability), writeError);
    scope.accessLines = lines.length;
    scope.accessSignature = statSignature(accessFile(scope));
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.assertOpen();
      if (this.options.mustExist) this.assertStoreExists();
      await guarded(`cannot create the store folder ${this.stateDirectory}`, () => fs.mkdir(this.stateDirectory, { recursive: true }), writeError);
      return this.lock.run(task);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * mustExist: use the root only if it holds a store: its `.memloom/store.json`, or a `memory/` folder (Markdown
   * written by hand, a store cloned from git without `.memloom/`). A missing folder, or one holding neither (a plain
   * notes folder, a mistyped `.`), is MISSING_RESOURCE, and nothing is created or written in it.
   */
  private assertStoreExists(): void {
    const links: FoundLink[] = [];
    const exists = existsSync(this.root);
    if (exists && (existsSync(this.storeFile) || discoverScopes(this.root, links).length > 0 || links.length > 0)) return;
    const what = exists ? 'the folder holds no memloom store (neither .memloom/store.json nor a memory/ folder)' : 'the folder does not exist';
    throw missingStoreError({ backend: BACKEND, where: `at ${this.root}`, what, check: 'the path', details: { path: this.root } });
  }

  get journalFile(): string {
    return path.join(this.stateDirectory, 'journal.json');
  }

  private get storeFile(): string {
    return path.join(this.stateDirectory, 'store.json');
  }

  private readStoreFile(): Promise<VectorHeader | undefined> {
    return readStoreFile(this.storeFile, this.display(this.storeFile));
  }

  private conflict(id: string): MemloomError {
    return storeError('CONFLICT', `memory ${id} was changed by someone else`, { id });
  }

  private display(file: string): string {
    return shownPath(this.root, file);
  }

  private assertOpen(): void {
    if (this.closed) throw storeError('CLOSED', 'store is closed');
  }
}

