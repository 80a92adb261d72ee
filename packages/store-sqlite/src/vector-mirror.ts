import { FlatVectorIndex } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import type { VectorBinding } from './schema.js';
import { floatsOfBlob } from './vectors.js';
import type { LiveVectorChange, LiveVectorListener } from './writes.js';

/**
 * The live vectors held in process memory too, in core's FlatVectorIndex (an
 * exact SIMD scan, about six times faster than sqlite-vec's), grouped by
 * user key so a user's search scans that user's vectors only. SQLite stays
 * the truth; the copy is read at the second vector search and kept in step:
 *
 * - this connection's writes are applied after they commit, when the copy
 *   was up to date as the write began;
 * - other connections' commits show as a new `PRAGMA data_version`; the copy
 *   then reads the rows named in `vector_changes` since it was last in step,
 *   or every vector again when it is further behind than that log reaches
 *   (or another vector table became live, after a re-index).
 *
 * When the runtime has no WebAssembly SIMD, the vectors need more memory
 * than the store allows the copy (`vectorMirrorMaxBytes`) or cannot all be
 * read, searches use sqlite-vec.
 */
/** The in-memory copy of a SQLite store's vectors, as `vectorMirrorStatus()` reports it. */
export interface VectorMirrorStatus {
  /**
   * `off`: `vectorMirror: false`; `not-loaded`: read at the store's second vector search
   * (or after a close); `loaded`: searches use it; `unavailable`: it could not be made or kept
   * (no WebAssembly SIMD, past `vectorMirrorMaxBytes`, unreadable vectors), searches use sqlite-vec.
   */
  state: 'off' | 'not-loaded' | 'loaded' | 'unavailable';
  /** Vectors it holds. */
  vectors: number;
  /** Process memory it takes, in bytes. */
  bytes: number;
}

export class VectorMirror {
  private index: FlatVectorIndex | undefined;
  private table: string | undefined;
  /** `PRAGMA data_version` when the copy was last in step with the file. */
  private dataVersion = -1;
  /** The newest `vector_changes` row the copy includes. */
  private seq = 0;
  /** Changes of the write in progress; applied when it commits, if the copy was in step as it began. */
  private pending: LiveVectorChange[] | undefined;
  private pendingSeq = 0;
  private unavailable = false;
  /** Vector searches answered so far; the copy is read at the second (see `current`). */
  private searches = 0;

  /** `maxBytes`: the most memory the copy may take; a store that needs more searches with sqlite-vec. */
  constructor(
    private readonly enabled: boolean,
    private readonly maxBytes: number,
  ) {}

  /**
   * The copy, brought up to date with the file; undefined when searches must use sqlite-vec.
   * The first vector search of a store is sqlite-vec's: a process that searches once (a CLI
   * command, a script) does not read every vector for it. The copy is read at the second.
   */
  current(database: Database, binding: VectorBinding): FlatVectorIndex | undefined {
    if (!this.enabled || this.unavailable) return undefined;
    if (++this.searches < 2 && !this.index) return undefined;
    if (this.index && this.table === binding.table && dataVersion(database) === this.dataVersion) return this.index;
    try {
      // One read transaction: the version, the log and the vectors are of the same moment.
      database.transaction(() => this.catchUp(database, binding))();
    } catch {
      // No WebAssembly SIMD, more vectors than the copy may hold, or a vector sqlite-vec cannot read
      // (a damaged chunk): the copy is an accelerator, so searches go on through sqlite-vec,
      // which reads only the partitions a search needs.
      this.forget();
      this.unavailable = true;
      return undefined;
    }
    return this.index;
  }

  /**
   * Call first thing inside a write transaction (the write lock is held: nobody else commits
   * until it ends). Each attempt of a write starts afresh here, so a rolled-back one leaves nothing.
   */
  beginWrite(database: Database): void {
    this.pending = this.index && dataVersion(database) === this.dataVersion ? [] : undefined;
    this.pendingSeq = 0;
  }

  /** The writer's listener: the live vectors the write in progress changes, and its log entry. */
  readonly listener: LiveVectorListener = {
    changed: (change) => this.pending?.push(change),
    logged: (seq) => {
      this.pendingSeq = seq;
    },
  };

  /** The write committed: apply its changes (a copy that was behind catches up at the next search instead). */
  committed(): void {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending || !this.index) return;
    try {
      for (const change of pending) this.apply(this.index, change.rowId, change.vector, change.userKey);
    } catch {
      // The copy outgrew its limit: the write is committed all the same; searches go to sqlite-vec.
      this.forget();
      this.unavailable = true;
      return;
    }
    if (this.pendingSeq > 0) this.seq = this.pendingSeq;
  }

  /** What the copy is doing: for `SqliteStore.vectorMirrorStatus()`. */
  status(): VectorMirrorStatus {
    if (!this.enabled) return { state: 'off', vectors: 0, bytes: 0 };
    if (this.unavailable) return { state: 'unavailable', vectors: 0, bytes: 0 };
    if (!this.index) return { state: 'not-loaded', vectors: 0, bytes: 0 };
    return { state: 'loaded', vectors: this.index.size, bytes: this.index.bytes };
  }

  /** Drop the copy (closing, or after a failure): the next search reads it again. */
  forget(): void {
    this.index = undefined;
    this.table = undefined;
    this.dataVersion = -1;
    this.seq = 0;
    this.pending = undefined;
  }

  private catchUp(database: Database, binding: VectorBinding): void {
    const version = dataVersion(database);
    const log = database.prepare('SELECT min(seq) AS oldest, max(seq) AS newest FROM vector_changes').get() as {
      oldest: number | null;
      newest: number | null;
    };
    const inReach = log.oldest === null || log.oldest <= this.seq + 1;
    const changed =
      this.index && this.table === binding.table && inReach ? changedRows(database, this.seq, log.newest ?? this.seq) : undefined;
    // Reading a quarter of the vectors one by one costs about what reading them all in one scan does.
    if (this.index && changed && changed.length <= this.index.size / 4) {
      this.readChanges(database, binding, this.index, changed);
    } else {
      this.index = undefined;
      this.index = readAll(database, binding, this.maxBytes);
      this.table = binding.table;
    }
    this.seq = log.newest ?? 0;
    this.dataVersion = version;
  }

  /** Re-read the vectors of these rows (other connections changed them). */
  private readChanges(database: Database, binding: VectorBinding, index: FlatVectorIndex, rows: readonly number[]): void {
    const read = database.prepare(`SELECT user_key, embedding FROM ${binding.table} WHERE rowid = ?`);
    for (const rowId of rows) {
      const row = read.get(BigInt(rowId)) as { user_key: string; embedding: Buffer } | undefined;
      this.apply(index, rowId, row?.embedding, row?.user_key ?? '');
    }
  }

  private apply(index: FlatVectorIndex, rowId: number, vector: Buffer | undefined, userKey: string): void {
    if (vector) index.set(rowId, floatsOfBlob(vector), userKey);
    else index.delete(rowId);
  }
}

/** The rows whose live vector changed after log entry `after`, up to `newest`. */
function changedRows(database: Database, after: number, newest: number): number[] {
  if (newest <= after) return [];
  return database
    .prepare('SELECT DISTINCT value FROM vector_changes, json_each(vector_changes.row_ids) WHERE seq > ? AND seq <= ?')
    .pluck()
    .all(after, newest) as number[];
}

function readAll(database: Database, binding: VectorBinding, maxBytes: number): FlatVectorIndex {
  const index = new FlatVectorIndex(binding.dimension, { maxBytes });
  const count = database.prepare(`SELECT count(*) FROM ${binding.table}`).pluck().get() as number;
  index.reserveFor(count);
  const rows = database.prepare(`SELECT rowid, user_key, embedding FROM ${binding.table}`).raw().iterate() as IterableIterator<[number | bigint, string, Buffer]>;
  for (const [rowId, userKey, embedding] of rows) index.set(Number(rowId), floatsOfBlob(embedding), userKey);
  return index;
}

function dataVersion(database: Database): number {
  return database.pragma('data_version', { simple: true }) as number;
}
