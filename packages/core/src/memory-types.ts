import type { Clock, Embedder, LanguageModel, ListAfter, ListOrder, MemoryStore } from './contracts.js';
import type { MaintainOptions, MaintenanceReport } from './maintenance.js';
import type { EngineConfig, EngineConfigInput } from './options.js';
import type { Prompts } from './prompts.js';
import type { MemoryFilter, MemoryRecord, MemoryVersion, Scope, ScoreParts } from './types.js';
import type { UpdateDecision } from './update-strategy.js';

export interface Logger {
  debug?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
}

export interface CreateMemoryOptions extends EngineConfigInput {
  store: MemoryStore;
  embedder: Embedder;
  /** Used for merge and compression text when given; a deterministic fallback otherwise. */
  languageModel?: LanguageModel;
  /** Injected time. @default the system clock */
  clock?: Clock;
  /** Id generator for new memories. @default time-ordered UUIDs (version 7) at `clock`'s time: `timeOrderedId` */
  generateId?: () => string;
  /** Scope applied when a call gives none (e.g. `{ userId: 'alice' }` for a single-user app). */
  scope?: Scope;
  /** Override any prompt sent to the language model. */
  prompts?: Partial<Prompts>;
  logger?: Logger;
}

export interface AddOptions {
  scope?: Scope;
  category?: MemoryRecord['category'];
  type?: MemoryRecord['type'];
  importance?: number;
  source?: MemoryRecord['source'];
  verified?: boolean;
  /** Ids of the messages or turns this content came from. */
  sources?: string[];
  tags?: string[];
  /**
   * Free data kept with the memory: JSON data (objects, arrays, strings,
   * finite numbers, booleans, null), nested at most 64 levels, which every
   * store keeps exactly. Anything else (a Map or class instance, a bigint, a
   * function, NaN or Infinity, `undefined` in an array, an empty array slot,
   * a cycle) is INVALID_OPTIONS naming its path (`metadata.a.list.2`). A
   * Date is stored as its ISO 8601 text, and a property holding undefined is
   * left out, as JSON does; a lone half of a UTF-16 pair becomes U+FFFD.
   */
  metadata?: Record<string, unknown>;
  /**
   * When the content was said (imports, replays). At most FUTURE_AT_TOLERANCE_MS (24 hours) after
   * the clock's now, else INVALID_INPUT: a memory dated in the future would not decay until then.
   * @default now
   */
  at?: Date | string | number;
  /** @default 'user_mention' */
  trigger?: 'user_mention' | 'extraction' | 'import';
  /**
   * `false` stores the content as an independent new memory without comparing
   * it to existing ones: no merge, no keep-both, no boost of a neighbour. For
   * verbatim records that an adapter addresses by its own key (chat
   * transcripts, key-value items), where merging two records would lose one.
   * @default true
   */
  merge?: boolean;
  /**
   * Text around the content that helps find it later, e.g. the turn or two
   * before it in a conversation. It is kept on the memory (`context`, in its
   * history too) and helps find it both ways: the stored vector is the
   * content's plus `retrieval.contextWeight` times the context's, normalized,
   * and the keyword index holds the context's words after the content's. It
   * is not the memory's content (not rendered, not merged) and whether to
   * merge is decided on the content's own vector, and, against a memory with
   * the same words kept with the same context, also on the content moved toward that context as
   * it would be stored (the same words in the same context merge); the same
   * words added with no context are moved toward the context of a memory that
   * has them, and merge with it; a merge keeps the newest context.
   * Later re-embeddings (an `update`, `restore`, `reindex`) use it again.
   * At most `limits.maxContentLength` characters; blank counts as none.
   */
  context?: string;
  /**
   * Stops the add: checked before the content is embedded and before the
   * memory is decided and written, and passed to the embedder and to the
   * merge's model call, which it aborts while in flight. An abort throws the
   * signal's reason (as `fetch` does), not a MemloomError, and writes
   * nothing: the add is one atomic write, made whole or not at all.
   */
  signal?: AbortSignal;
}

/** One turn of a conversation for `addTurns`: its text, and what `add` takes for it alone. */
export interface AddTurn {
  /** The turn as it is to be remembered, e.g. `"Caroline: I went to a support group yesterday"`. */
  content: string;
  /** When it was said; at most 24 hours after now, as `add`'s `at`. @default the call's `at`, else now */
  at?: Date | string | number;
  /** Ids of the message or turn it is. */
  sources?: string[];
  /** @default the call's `tags` */
  tags?: string[];
  /** JSON data, as `AddOptions.metadata` (INVALID_INPUT otherwise, naming the turn and the path). @default the call's `metadata` */
  metadata?: Record<string, unknown>;
}

export interface AddTurnsOptions extends Omit<AddOptions, 'context' | 'sources'> {
  /**
   * How many of the turns before each one go with it as its `context` (see
   * `AddOptions.context`), joined by new lines. Only turns of this call count:
   * call it once per conversation, or per session of one. @default 2
   */
  contextTurns?: number;
  /**
   * The first `skip` turns are already stored (a call resumed after an interruption): they are
   * checked and serve as the context of the turns after them, but are not stored again and have no
   * result. @default 0
   */
  skip?: number;
  /**
   * Called after each turn is stored: (turns stored, turns in the call less `skip`, the turn's result). A
   * promise it returns is awaited before the next turn (a caller can yield to
   * its event loop there, so that a signal it aborts from a handler is seen).
   */
  onProgress?: (done: number, total: number, result: AddResult) => unknown;
  /**
   * Stops between turns and inside one (see `AddOptions.signal`: the model
   * call of a merge in flight is aborted), throwing the signal's reason. The
   * turns stored before stay stored, each whole; the turn it stopped in and
   * those after it are not stored. Already aborted: nothing is embedded or
   * stored (the turns are still checked first).
   */
  signal?: AbortSignal;
}

export interface AddResult {
  decision: UpdateDecision;
  /** The memory created, or the one merged into. */
  memory: MemoryRecord;
  /** For keep-both and new: the nearest old memory after its weight boost (content, level and timestamp unchanged). */
  boosted?: MemoryRecord;
  /** Set when a language model was asked and its answer was not used. */
  modelFallback?: string;
}

export interface SearchOptions {
  scope?: Scope;
  /** @default retrieval.defaultLimit (10) */
  limit?: number;
  /**
   * Which memories may come back. With `ids`, only those are ranked, every one a candidate
   * whatever the `limit`, so each is scored by its own cosine and keyword (BM25) score; the
   * keyword part is normalised by the best match in the scope and the rest of the filter, as
   * without `ids`. A memory thus scores what a search without `ids` gives it (that search
   * estimates a part of a memory outside its candidate lists), and the results of searches over
   * parts of a set merge into one ranking by score (only the recency part moves with the clock
   * between them).
   */
  filter?: MemoryFilter;
  /** Drop results scoring below this (0..1). */
  minScore?: number;
  /**
   * Stops the search: checked before the query is embedded and before the
   * access times of the results are written (`trackAccess`), and passed to
   * the embedder, which it aborts while in flight. An abort throws the
   * signal's reason (as `fetch` does), not a MemloomError, and writes
   * nothing. `renderContext` passes it on (without a query it is only
   * checked).
   */
  signal?: AbortSignal;
}

export interface RenderContextOptions extends SearchOptions {
  /**
   * With a query, the daily notes (episodes, see `recentNotes`) of this many last days, today
   * included, follow the results (seed 001's `recent_days`); 0 adds none. Without a query the index
   * already lists them. @default the memory's `policy.recent_days` (3)
   */
  recentDays?: number;
}

export interface SearchResult {
  memory: MemoryRecord;
  /** Combined score in 0..1. */
  score: number;
  parts: ScoreParts;
  /** Seed 000's warning when the memory is older than its freshness threshold, else undefined. */
  freshness?: string;
}

export interface ListOptions {
  scope?: Scope;
  filter?: MemoryFilter;
  limit?: number;
  offset?: number;
  orderBy?: ListOrder;
  direction?: 'asc' | 'desc';
  /**
   * Continue after this memory (the last of the page before) in this order;
   * the place holds when it has since been deleted or changed. Stores that
   * declare `capabilities.listAfter` (every store in memloom); NOT_SUPPORTED
   * on others. See `ListQuery.after`.
   */
  after?: ListAfter;
}

export interface UpdatePatch {
  content?: string;
  /** The text the memory was said in (see `MemoryRecord.context`); `null` removes it. Re-embeds the memory. */
  context?: string | null;
  category?: MemoryRecord['category'];
  type?: MemoryRecord['type'];
  level?: MemoryRecord['level'];
  importance?: number;
  weight?: number;
  verified?: boolean;
  /** Replaces the provenance list (ids of the messages or turns the memory came from). */
  sources?: string[];
  tags?: string[];
  /** Replaces the metadata; JSON data, as `AddOptions.metadata` (INVALID_INPUT otherwise, naming its path). */
  metadata?: Record<string, unknown>;
}

export interface UpdateOptions {
  /** Only touch the memory when it is in this scope (NOT_FOUND otherwise). */
  scope?: Scope;
  /** Why, for the history. @default 'manual edit' */
  reason?: string;
  /** Treat the edit as an activation and refresh updatedAt. @default false */
  refreshTimestamp?: boolean;
  /** What caused the change, for the history (the pipeline uses `review` and `extraction`). @default 'manual_edit' */
  trigger?: 'manual_edit' | 'review' | 'extraction';
  /** What the change did, for the history. @default 'edit' */
  action?: 'edit' | 'boost' | 'promote' | 'review';
  /**
   * Only change the memory if its revision is still this one (CONFLICT
   * otherwise, nothing written): for a patch computed from a record read
   * earlier, such as a boost of the importance it had, so a change made in
   * between is never overwritten.
   */
  expectedRevision?: number;
  /**
   * Stops the update: checked before the memory is read and before it is
   * written, and passed to the embedder when the content or context changes,
   * which it aborts while in flight. An abort throws the signal's reason, not
   * a MemloomError, and writes nothing.
   */
  signal?: AbortSignal;
}

export interface RestoreOptions extends ScopedOptions {
  /** Why, for the history. @default 'restored version N' */
  reason?: string;
  /**
   * Stops the restore, as `UpdateOptions.signal` does an update: checked
   * before reading and before writing, and passed to the embedder when the
   * restored text needs embedding. An abort throws the signal's reason and
   * writes nothing.
   */
  signal?: AbortSignal;
}

export interface ScopedOptions {
  /** Only see the memory when it is in this scope (NOT_FOUND / undefined otherwise). */
  scope?: Scope;
}

export interface DeleteOptions extends ScopedOptions {
  /**
   * Only delete the memory if its revision is still this one (CONFLICT
   * otherwise, nothing deleted): for a decision taken on a record read
   * earlier, such as a review's, so a memory changed in between is kept.
   */
  expectedRevision?: number;
}

export interface RenderOptions {
  scope?: Scope;
  filter?: MemoryFilter;
  /** Most memories read for the index (the most recently updated). @default 1000 */
  limit?: number;
}

/** The memory layer: what applications and adapters call. */
export interface Memory {
  readonly config: EngineConfig;
  readonly store: MemoryStore;
  /** The scope a call's own scope is laid over (`createMemory({ scope })`), `{}` when none was given. */
  readonly defaultScope: Scope;
  readonly embedder: Embedder;
  readonly languageModel: LanguageModel | undefined;
  readonly clock: Clock;
  /** The prompts in use: the defaults with `createMemory({ prompts })` applied. */
  readonly prompts: Prompts;
  add(content: string, options?: AddOptions): Promise<AddResult>;
  /**
   * Store the turns of a conversation, in order, each as its own memory (an
   * `add`, with the merge decision) that keeps the turns before it as its
   * context: an answer is then found by the words of the question it
   * answers. Every turn is checked before the first is stored; a failure
   * while storing, or an abort of `options.signal`, leaves the turns before
   * it stored (`onProgress` counts them).
   */
  addTurns(turns: readonly (string | AddTurn)[], options?: AddTurnsOptions): Promise<AddResult[]>;
  search(query: string, options?: SearchOptions): Promise<SearchResult[]>;
  get(id: string, options?: ScopedOptions): Promise<MemoryRecord | undefined>;
  list(options?: ListOptions): Promise<MemoryRecord[]>;
  count(options?: { scope?: Scope; filter?: MemoryFilter }): Promise<number>;
  update(id: string, patch: UpdatePatch, options?: UpdateOptions): Promise<MemoryRecord>;
  delete(id: string, options?: DeleteOptions): Promise<void>;
  deleteAll(scope: Scope): Promise<number>;
  history(id: string, options?: ScopedOptions): Promise<MemoryVersion[]>;
  restore(id: string, version: number, options?: RestoreOptions): Promise<MemoryRecord>;
  /**
   * Seed 004's passive maintenance pass, page by page (see `MaintainOptions`;
   * `signal` stops it between memories, and the memories of the page done
   * by then are written).
   */
  maintain(options?: MaintainOptions): Promise<MaintenanceReport>;
  renderIndex(options?: RenderOptions): Promise<string>;
  /**
   * Seed 001's retrieval, fenced for a system prompt: with a query, the results of `search` then the
   * daily notes of the last `recentDays` days (newest first, at most `MAX_RECENT_NOTES`, those among
   * the results not repeated); without one, the index (`renderIndex`).
   */
  renderContext(query?: string, options?: RenderContextOptions): Promise<string>;
  close(): Promise<void>;
}
