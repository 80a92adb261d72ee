import type { PolicyStorage } from './policy.js';
import type { MemoryFilter, MemoryRecord, MemoryVersion, Scope, ScoredMemory } from './types.js';

/** Injected time. Everything that depends on age reads it from here, never from `Date.now()`. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

// ---------------------------------------------------------------------------
// Embedder
// ---------------------------------------------------------------------------

export interface EmbedOptions {
  /** Some models embed queries and documents differently. Default `document`. */
  purpose?: 'document' | 'query';
  signal?: AbortSignal;
}

/** Turns text into unit vectors. Implementations must be deterministic. */
export interface Embedder {
  /** Names the vector space (model and settings). Two embedders with the same id must give the same vectors. */
  readonly id: string;
  readonly dimension: number;
  /**
   * Set by an embedder that reads a query (`purpose: 'query'`) otherwise than a
   * document of the same text, naming that reading and its version (the offline
   * embedder: `zh-discourse-2`). An embedding cache keys query vectors with it, so a
   * changed reading is never served an older one's vectors, and never lets a query
   * and a document share an entry. Change it whenever the same query may give
   * another vector; documents, and so `id`, are not affected.
   */
  readonly queryReading?: string;
  /**
   * One vector per text, in order, each an array of `dimension` finite numbers: the type every caller
   * of `embed` is written against, so a model that gives a Float32Array returns `Array.from(vector)`.
   * Core (`embedChecked`) and the wrappers in `@memloom/embeddings` check each vector at run time and
   * also take a Float32Array or Float64Array (no other typed array) from an embedder this type does
   * not hold (plain JavaScript, a cast), copying it into an array; other callers (LangChain through
   * `MemloomEmbeddings`) get it as given.
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]>;
  /** Release model resources. */
  close?(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Language model
// ---------------------------------------------------------------------------

export interface GenerateRequest {
  system?: string;
  prompt: string;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

/**
 * Any chat model, reduced to text in, text out. Optional everywhere: every
 * step that uses one has a deterministic fallback.
 */
export interface LanguageModel {
  readonly id: string;
  generate(request: GenerateRequest): Promise<string>;
}

// ---------------------------------------------------------------------------
// Store
// ---------------------------------------------------------------------------

/** What a store can do beyond the required methods, so callers can ask instead of catching. */
export interface StoreCapabilities {
  /** `textSearch` is implemented (keyword / BM25 ranking). */
  textSearch: boolean;
  /** Data survives `close()` and a new process. */
  persistent: boolean;
  /** Several processes may open the same store at once without losing writes. */
  multiProcess: boolean;
  /**
   * The store can move its vectors to another embedder in place, resumably:
   * `beginReindex`, `pendingReindex`, `stageReindex`, `commitReindex` and
   * `abortReindex` are implemented. Drive them with core's `reindex()`.
   * Absent means false.
   */
  reindex?: boolean;
  /** `listPage` is implemented (core's maintenance pass then pages by it). Absent means false. */
  listPage?: boolean;
  /**
   * `list` takes `after` (a place in an order that writes do not move): core's
   * `copyMemories` and the CLI's export then page by it. Absent means false.
   */
  listAfter?: boolean;
  /** `historyMany` and `getVectors` are implemented: many memories' histories and vectors in a few reads. Absent means false. */
  readMany?: boolean;
}

/** Where a re-index stands: how many memories already have a vector for the target. */
export interface ReindexStatus {
  /** The embedder (and its dimension) the store is moving to. */
  target: StoreOpenOptions;
  /** Memories that already hold a vector for the target. */
  done: number;
  /** Memories in the store. */
  total: number;
}

/** A vector for the re-index target, computed from a memory as it was at `revision`. */
export interface StagedVector {
  id: string;
  revision: number;
  vector: readonly number[];
}

export interface StoreOpenOptions {
  /** Dimension of every vector the store will hold. */
  dimension: number;
  /** Id of the embedder whose vectors the store holds. */
  embedderId: string;
}

export type ListOrder = 'createdAt' | 'updatedAt' | 'id' | 'stored';

export interface ListQuery {
  /** See VectorQuery.exactScope. */
  exactScope?: boolean;
  scope?: Scope;
  filter?: MemoryFilter;
  /** Default: all. */
  limit?: number;
  offset?: number;
  /**
   * Default `createdAt`. Ties are broken by id. `stored` is the store's own
   * order (the SQLite store's row order, an in-memory store's insertion
   * order): the cheapest to read, and to write back in batches, for a pass
   * over everything. It must stay the same between reads while nothing is
   * written, so that pages by `offset` cover every memory once; a scope or
   * filter lists part of it, in the same order. Writes keep it too: an
   * update leaves a memory in its place and a delete takes out only that
   * memory, so core's maintenance pass can write each page back before it
   * reads the next (new memories may go anywhere).
   */
  orderBy?: ListOrder;
  /** Default `asc`. */
  direction?: 'asc' | 'desc';
  /**
   * Start after this memory in the order asked for: the memories whose
   * `orderBy` field, then id, come after its (before it, `desc`). Give the
   * last memory of the page before; only its id and the field ordered by are
   * read, so the place holds when that memory, or any before it, has since
   * been deleted or changed. `offset` then counts from there. Not with
   * `orderBy: 'stored'` (`listPage` pages that). Only for stores that declare
   * `capabilities.listAfter`.
   */
  after?: ListAfter;
}

/** A place in a `list` order: a memory's id, and the timestamp ordered by (`createdAt` or `updatedAt`) when it is one. */
export interface ListAfter {
  id: string;
  createdAt?: string;
  updatedAt?: string;
}

/** A page of the store's own order: see `MemoryStore.listPage`. */
export interface PageQuery {
  /** See VectorQuery.exactScope. */
  exactScope?: boolean;
  scope?: Scope;
  filter?: MemoryFilter;
  /** How many memories at most; an integer of at least 1. */
  limit: number;
  /** Where to start: the `next` of the page before, from this store. Absent: from the beginning. */
  after?: string;
}

/** What `listPage` gives. */
export interface MemoryPage {
  memories: MemoryRecord[];
  /**
   * Where the next page starts (opaque to the caller). Absent when nothing
   * follows; present on a full page even if the next one turns out empty.
   */
  next?: string;
}

export interface VectorQuery {
  /** Fields the scope leaves out must be absent on the memory too (used for merge candidates). */
  exactScope?: boolean;
  vector: readonly number[];
  scope?: Scope;
  filter?: MemoryFilter;
  limit: number;
  /**
   * The caller accepts an approximate answer: a store may search an index
   * instead of comparing every vector when the scope is large, and so miss a
   * true neighbour now and then. Scores must still be the true cosines, and
   * hits must still match the scope and filter. Core asks for it when it looks
   * for the memory a new one may merge into; searches stay exact. A store
   * may ignore it. @default false
   */
  approximate?: boolean;
}

export interface TextQuery {
  /** See VectorQuery.exactScope. */
  exactScope?: boolean;
  /** Raw query text; the store splits it with core's `keywordTerms` so every store matches alike. */
  text: string;
  scope?: Scope;
  filter?: MemoryFilter;
  limit: number;
}

/**
 * One write. `put` creates (expectedRevision 0) or replaces a memory and
 * appends its version; `delete` removes the memory, its vector, its text
 * entry and its history.
 */
export type MemoryChange =
  | {
      op: 'put';
      memory: MemoryRecord;
      /** Required when creating; omitted to keep the stored vector. */
      vector?: readonly number[];
      /** Revision the change was based on; 0 when the memory must not exist yet. */
      expectedRevision: number;
      version: MemoryVersion;
    }
  | {
      op: 'delete';
      id: string;
      /** When given, the delete fails with CONFLICT if the memory moved on. */
      expectedRevision?: number;
    };

/**
 * A storage backend. Stores are thin: they persist records, vectors and
 * versions and answer queries; every rule lives in core.
 *
 * Reads that take a scope and a filter (`list`, `listPage`, `count`,
 * `vectorSearch`, `textSearch`) check their shape before reading, with core's
 * `assertQueryScope`: an unknown scope key or a scope value that is not a
 * string is INVALID_SCOPE, a filter field that is unknown or of the wrong type
 * INVALID_INPUT, so a misspelt key never matches every memory. Limits, text,
 * ids and query vectors: `assertQueryInput`.
 *
 * A write the store may not make (a file or folder this process may not
 * write, a read-only disk, an API key that may only read) fails with
 * STORE_ERROR and `details.readonly: true` in every backend: a caller tells it
 * from other failures by that alone. SQLite and Markdown word it with core's
 * `readOnlyStoreError`; Qdrant names the refused request (HTTP 403).
 */
export interface MemoryStore {
  /** Short backend name used in errors: `memory`, `sqlite`, `markdown`, `qdrant`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /**
   * Prepare the store for vectors of this dimension from this embedder.
   * Fails with DIMENSION_MISMATCH or EMBEDDER_MISMATCH when it already holds
   * vectors of another kind.
   */
  open(options: StoreOpenOptions): Promise<void>;
  get(id: string): Promise<MemoryRecord | undefined>;
  /** Records for the ids that exist, in the order asked. */
  getMany(ids: readonly string[]): Promise<MemoryRecord[]>;
  list(query: ListQuery): Promise<MemoryRecord[]>;
  /**
   * The store's own (`stored`) order, a page at a time, from a place that
   * writes do not move: `after` (a page's `next`) marks the same place after
   * the memories before or at it were updated or deleted, by this caller or
   * another process. A pass that writes each page back before reading the
   * next, or that runs while others write, meets every memory that exists
   * throughout it at least once; memories added meanwhile may come or not,
   * and a store that reloads memories written elsewhere (the Markdown store)
   * may bring those again. Optional: without it, core pages
   * `list({ orderBy: 'stored' })` by offset, which another process's deletes
   * can shift.
   */
  listPage?(query: PageQuery): Promise<MemoryPage>;
  count(query: { scope?: Scope; filter?: MemoryFilter }): Promise<number>;
  /**
   * Nearest memories by cosine similarity (score in -1..1), best first. A
   * query vector holding NaN or Infinity, or all zeros (no direction), is
   * INVALID_INPUT; one of another dimension DIMENSION_MISMATCH.
   */
  vectorSearch(query: VectorQuery): Promise<ScoredMemory[]>;
  /** Keyword matches (score > 0, higher is better), best first. Present when `capabilities.textSearch`. */
  textSearch?(query: TextQuery): Promise<ScoredMemory[]>;
  /**
   * Apply changes all together or not at all. A put whose expectedRevision
   * does not match the stored revision fails the whole call with CONFLICT.
   * A put must carry `memory.revision === version.version === expectedRevision + 1`
   * (otherwise INVALID_INPUT: the caller numbered it wrong, whatever is stored).
   * Deleting an unknown id is a no-op, unless `expectedRevision` is given
   * (then it is a CONFLICT). Every check of a put's input below comes before
   * any revision is compared: a put that is both stale and bad is refused
   * for its input (INVALID_INPUT, INVALID_SCOPE, DIMENSION_MISMATCH), not
   * with CONFLICT. A put that creates a memory (`expectedRevision` 0) must
   * give it an id that is a string, not blank, at most 256 characters, without
   * a control character or a bidi control (`assertRecordId`: INVALID_INPUT
   * naming it by code point, such as U+001B); a put that rewrites a memory
   * needs only a string id, so a memory written before that rule (0.1.0) stays
   * maintainable. Records come back exactly as put; a store that
   * cannot keep a lone half of a UTF-16 pair in an id, scope, content or
   * context refuses it instead (`assertWellFormedRecord`). Core's facade never
   * writes one. Every store refuses, with INVALID_INPUT and nothing written, a
   * put whose metadata, or its version's before's or after's, is not JSON data
   * (`assertRecordMetadata`: no Date, Map, NaN, cycle, …) or whose vector
   * holds NaN or Infinity or is all zeros
   * (`assertUsableVector`); a vector of another dimension is DIMENSION_MISMATCH.
   * A put whose memory's scope is absent, `null` or of the wrong shape (as a
   * read's scope) is INVALID_SCOPE, nothing written (`assertRecordScope`); so
   * is a put that creates a memory whose scope holds a blank value
   * (`{ userId: '' }`), while one that rewrites such a memory is taken.
   */
  apply(changes: readonly MemoryChange[]): Promise<void>;
  /**
   * Delete every memory in scope (with vectors, text entries and history).
   * Returns how many. The scope must set at least one of userId, agentId and
   * sessionId: an empty one (`{}`, `{ userId: undefined }`), or one of the
   * wrong shape, is INVALID_SCOPE and deletes nothing (`assertDeleteScope`),
   * since it would match every memory. There is no "delete everything".
   */
  deleteByScope(scope: Scope): Promise<number>;
  /** Versions of one memory, oldest first. Empty when the memory does not exist. */
  history(id: string): Promise<MemoryVersion[]>;
  /** The stored vector, for export and re-indexing. */
  getVector(id: string): Promise<number[] | undefined>;
  /**
   * `history` of each id, in the order asked (empty for an unknown id), in
   * as few reads as the store can: for copies and exports, which would
   * otherwise ask once per memory (a request each, on a server). Optional,
   * declared by `capabilities.readMany`; read through core's `historiesOf`.
   */
  historyMany?(ids: readonly string[]): Promise<MemoryVersion[][]>;
  /** `getVector` of each id, in the order asked (undefined for an unknown id). With `historyMany`; read through core's `vectorsOf`. */
  getVectors?(ids: readonly string[]): Promise<(number[] | undefined)[]>;
  /**
   * Set lastAccessedAt on these memories (unknown ids are ignored) without
   * making a version. `at` not an ISO 8601 time (core's `isIsoTime`), or ids
   * not an array of strings: INVALID_INPUT, nothing written
   * (`assertQueryInput({ ids, at }, …)`). Resolves `false` when it recorded
   * nothing because this store may not write (a file opened read-only, an API
   * key that may only read): a search then returns the times as stored.
   */
  touch(ids: readonly string[], at: string): Promise<void | false>;
  close(): Promise<void>;
  /**
   * Seed 001's workspace policy files of one scope (`memory/policy_overrides.json` with its
   * snapshots), for a store that keeps them: the Markdown store. Optional. When present, a search
   * without a `limit` reads the scope's overrides (`retrieve_limit`), and a pipeline given no
   * `policyStorage` reads and writes the overrides of each call's scope here.
   */
  policyStorage?(scope: Scope): PolicyStorage;

  // Re-index, present when `capabilities.reindex`. The store keeps serving
  // the current embedder's vectors until `commitReindex`, and keeps the
  // staged ones across a crash so that a second run resumes.

  /**
   * Start moving to `target`, or resume a move to the same target. A move to
   * another target in progress is discarded. Needs no `open()` for the target.
   * A store already on the target, with no move in progress, may report every
   * memory done (SQLite does): `reindex()` then embeds nothing.
   */
  beginReindex?(target: StoreOpenOptions): Promise<ReindexStatus>;
  /**
   * Up to `limit` memories that hold no vector for the target yet, in a stable order. A limit that is not
   * a whole number >= 0 is INVALID_INPUT (`assertQueryInput({ limit }, …)`).
   */
  pendingReindex?(limit: number): Promise<MemoryRecord[]>;
  /**
   * Keep vectors for the target. A vector whose memory is gone or moved past
   * `revision` is skipped (the memory stays pending). Returns how many were kept.
   * Until the commit, a put that carries a new vector makes its memory pending again.
   */
  stageReindex?(vectors: readonly StagedVector[]): Promise<number>;
  /**
   * Switch at once: the staged vectors replace the old ones and the store
   * belongs to the target from now on. CONFLICT while any memory is pending.
   */
  commitReindex?(): Promise<void>;
  /** Drop the staged vectors and stay with the current embedder. */
  abortReindex?(): Promise<void>;
}
