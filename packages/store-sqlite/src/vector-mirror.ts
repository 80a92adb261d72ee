import { FlatVectorIndex } from '@memloom/core';
import type { Database, Statement } from 'better-sqlite3';
import type { VectorBinding } from './schema.js';
import { visitChunkVectors } from './vec0-chunks.js';
import { floatsOfBlob } from './vectors.js';
import { userKey, type LiveVectorChange, type LiveVectorListener } from './writes.js';

/** The in-memory copy of a SQLite store's vectors, as `vectorMirrorStatus()` reports it. */
export interface VectorMirrorStatus {
  /**
   * `off`: `vectorMirror: false`; `not-loaded`: read at the store's second vector search
   * (or after a close); `loaded`: searches use it; `unavailable`: it could not be made or kept
   * (no WebAssembly SIMD, past `vectorMirrorMaxBytes`, unreadable vectors), searches use sqlite-vec.
   */
  state: 'off' | 'not-loaded' | 'loaded' | 'unavailable';
  /** Whose vectors it holds: `all` after a search without a user, else how many users' (memories without a user count as one). */
  users: number | 'all';
  /** Vectors it holds. */
  vectors: number;
  /** Process memory it takes, in bytes. */
  bytes: number;
}

/**
 * The live vectors held in process memory too, in core's FlatVectorIndex (an
 * exact SIMD scan, about six times faster than sqlite-vec's), grouped by
 * user key so a user's search scans that user's vectors only. SQLite stays
 * the truth. A user's vectors are read at the first search in that user's
 * scope (every vector at the first search without a user), from the store's
 * second vector search on, and kept in step:
 *
 * - this connection's writes are applied after they commit, when the copy
 *   was up to date as the write began and holds the table they wrote to;
 * - other writers' commits (other processes, or another store on the same
 *   connection) show as a newer entry in `vector_changes` (its AUTOINCREMENT
 *   sequence, read before each search); the copy then reads the rows named
 *   in the entries since it was last in step, or starts again, empty, when
 *   it is further behind than that log reaches, more than a quarter of what
 *   it holds changed, or another vector table became live (after a re-index).
 *
 * When the runtime has no WebAssembly SIMD, the vectors need more memory
 * than the store allows the copy (`vectorMirrorMaxBytes`) or cannot be read,
 * searches use sqlite-vec.
 */
export class VectorMirror {
  private index: FlatVectorIndex | undefined;
  private table: string | undefined;
  /** The user keys whose vectors the copy holds; `all` once a search without a user needed every one. */
  private readonly loaded = new Set<string>();
  private all = false;
  /** The newest `vector_changes` entry the copy includes (-1: none yet). */
  private seq = -1;
  /** Changes of the write in progress; applied when it commits, if the copy was in step as it began. */
  private pending: LiveVectorChange[] | undefined;
  private pendingSeq = 0;
  private unavailable = false;
  /** Vector searches answered so far; the copy is used from the second (see `current`). */
  private searches = 0;
  /** The statement reading the log's newest entry, checked before every search and write. */
  private newestStatement: { database: Database; statement: Statement } | undefined;

  /**
   * `maxBytes`: the most memory the copy may take; a store that needs more searches with sqlite-vec.
   * `approximateFrom`: the index's threshold for approximate queries (FlatVectorIndex).
   */
  constructor(
    private readonly enabled: boolean,
    private readonly maxBytes: number,
    private readonly approximateFrom: number,
  ) {}

  /**
   * The copy, up to date with the file and holding `group`'s vectors (every vector when
   * `group` is undefined); undefined when the search must use sqlite-vec. The first vector
   * search of a store is sqlite-vec's: a process that searches once (a CLI command, a script)
   * reads no vector for the copy.
   */
  current(database: Database, binding: VectorBinding, group: string | undefined): FlatVectorIndex | undefined {
    if (!this.enabled || this.unavailable) return undefined;
    if (++this.searches < 2 && !this.index) return undefined;
    const inStep = this.index !== undefined && this.table === binding.table && this.newestSeq(database) === this.seq;
    if (inStep && this.holds(group)) return this.index;
    try {
      // One read transaction: the log and the vectors are of the same moment.
      database.transaction(() => {
        if (!inStep) this.catchUp(database, binding);
        if (!this.holds(group)) this.load(database, binding, group);
      })();
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
    this.pending = this.index && this.newestSeq(database) === this.seq ? [] : undefined;
    this.pendingSeq = 0;
  }

  /** The writer's listener: the live vectors the write in progress changes, and its log entry. */
  readonly listener: LiveVectorListener = {
    changed: (change) => this.pending?.push(change),
    logged: (seq) => {
      this.pendingSeq = seq;
    },
  };

  /**
   * The write committed: apply its changes (a copy that was behind catches up at the next search
   * instead). Changes made in another table than the copy's (another vector table became live: a
   * re-index committed, here or by another process) are not applied: the next search starts again.
   */
  committed(): void {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending || !this.index || pending.some((change) => change.table !== this.table)) return;
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
    if (!this.enabled) return { state: 'off', users: 0, vectors: 0, bytes: 0 };
    if (this.unavailable) return { state: 'unavailable', users: 0, vectors: 0, bytes: 0 };
    if (!this.index) return { state: 'not-loaded', users: 0, vectors: 0, bytes: 0 };
    return { state: 'loaded', users: this.all ? 'all' : this.loaded.size, vectors: this.index.size, bytes: this.index.bytes };
  }

  /** Drop the copy (closing, or after a failure): the next search reads it again. */
  forget(): void {
    this.newestStatement = undefined;
    this.index = undefined;
    this.table = undefined;
    this.loaded.clear();
    this.all = false;
    this.seq = -1;
    this.pending = undefined;
  }

  /** The newest `vector_changes` entry ever written (AUTOINCREMENT keeps it when entries are pruned), 0 before the first. */
  private newestSeq(database: Database): number {
    if (this.newestStatement?.database !== database) {
      this.newestStatement = { database, statement: database.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'").pluck() };
    }
    return (this.newestStatement.statement.get() as number | undefined) ?? 0;
  }

  private holds(group: string | undefined): boolean {
    return this.all || (group !== undefined && this.loaded.has(group));
  }

  /** Bring what the copy holds up to date with the file (inside a read transaction). */
  private catchUp(database: Database, binding: VectorBinding): void {
    const newest = this.newestSeq(database);
    const oldest = database.prepare('SELECT min(seq) FROM vector_changes').pluck().get() as number | null;
    // Every entry after this.seq is still in the log (older ones are pruned).
    const inReach = this.seq >= 0 && (oldest === null ? newest === this.seq : oldest <= this.seq + 1);
    const index = this.index && this.table === binding.table && inReach ? this.index : undefined;
    // Reading a quarter of the vectors one by one costs about what reading them all again does.
    if (!index || !this.readChanges(database, binding, index, changedRows(database, this.seq, newest), index.size / 4)) {
      this.reload(binding);
    }
    this.seq = newest;
  }

  /**
   * Re-read the vectors other connections changed, of the users the copy holds (a row that moved
   * to a user it does not hold, or was deleted, leaves it). Returns false, having changed nothing,
   * when more than `most` vectors would have to be read.
   */
  private readChanges(database: Database, binding: VectorBinding, index: FlatVectorIndex, rows: readonly number[], most: number): boolean {
    if (rows.length === 0) return true;
    const owners = new Map(
      (
        database
          .prepare('SELECT m.row_id, m.user_id FROM json_each(?) AS j CROSS JOIN memories m ON m.row_id = j.value')
          .raw()
          .all(JSON.stringify(rows)) as [number, string | null][]
      ).map(([rowId, userId]) => [rowId, userKey(userId)]),
    );
    const held = new Set(
      rows.filter((rowId) => {
        const owner = owners.get(rowId);
        return owner !== undefined && this.holds(owner);
      }),
    );
    if (held.size > most) return false;
    for (const rowId of rows) if (!held.has(rowId)) index.delete(rowId);
    const read = database.prepare(`SELECT user_key, embedding FROM ${binding.table} WHERE rowid = ?`);
    for (const rowId of held) {
      const row = read.get(BigInt(rowId)) as { user_key: string; embedding: Buffer } | undefined;
      this.apply(index, rowId, row?.embedding, row?.user_key ?? '');
    }
    return true;
  }

  /** An empty copy with this mirror's memory limit and approximation threshold. */
  private newIndex(dimension: number): FlatVectorIndex {
    return new FlatVectorIndex(dimension, { maxBytes: this.maxBytes, approximateFrom: this.approximateFrom });
  }

  /** Start the copy again, empty: each user's vectors are read again at their next search. */
  private reload(binding: VectorBinding): void {
    this.index = this.newIndex(binding.dimension);
    this.loaded.clear();
    this.all = false;
    this.table = binding.table;
  }

  /** Add `group`'s vectors to the copy, or every vector when `group` is undefined. */
  private load(database: Database, binding: VectorBinding, group: string | undefined): void {
    this.table = binding.table;
    if (group === undefined) {
      // Every vector, a chunk at a time (else in one scan of vec0): a fresh copy, sized once.
      const index = this.newIndex(binding.dimension);
      // Sized by the memories (one live vector each): counting vec0 rows reads every one of them.
      index.reserveFor(database.prepare('SELECT count(*) FROM memories').pluck().get() as number);
      const read = visitChunkVectors(database, binding.table, binding.dimension, undefined, (vector) => index.set(vector.rowId, vector.floats, vector.userKey));
      if (!read) {
        const rows = database.prepare(`SELECT rowid, user_key, embedding FROM ${binding.table}`).raw().iterate() as IterableIterator<[number | bigint, string, Buffer]>;
        for (const [rowId, userKey, embedding] of rows) index.set(Number(rowId), floatsOfBlob(embedding), userKey);
      }
      this.index = index;
      this.loaded.clear();
      this.all = true;
      return;
    }
    // One user's: their partition's chunks, or else their rows through the user index, each vector by its row id.
    const index = this.index ?? this.newIndex(binding.dimension);
    this.index = index;
    const userId = group === '' ? null : group.slice(1);
    // Room for them at once: growing as it fills (a quarter more each time) copies its arrays again and again.
    index.reserveFor(index.size + (database.prepare('SELECT count(*) FROM memories WHERE user_id IS ?').pluck().get(userId) as number));
    if (!visitChunkVectors(database, binding.table, binding.dimension, group, (vector) => index.set(vector.rowId, vector.floats, group))) {
      const rows = database
        .prepare(`SELECT v.rowid, v.embedding FROM memories m JOIN ${binding.table} v ON v.rowid = m.row_id WHERE m.user_id IS ?`)
        .raw()
        .iterate(userId) as IterableIterator<[number | bigint, Buffer]>;
      for (const [rowId, embedding] of rows) index.set(Number(rowId), floatsOfBlob(embedding), group);
    }
    // Only once every vector is in: a load that throws part-way leaves the user to be read again.
    this.loaded.add(group);
  }

  /** A vector the copy learns of: kept when it holds its user, else (moved away, or deleted) dropped. */
  private apply(index: FlatVectorIndex, rowId: number, vector: Buffer | undefined, userKey: string): void {
    if (vector && this.holds(userKey)) index.set(rowId, floatsOfBlob(vector), userKey);
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
