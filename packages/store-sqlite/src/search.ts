import { inScope, type FlatVectorIndex, type ScoredMemory, type Scope, type TextQuery } from '@memloom/core';
import type { Statement } from 'better-sqlite3';
import { AFTER_RECORD, RECORD_COLUMNS, rowIdOf, rowToRecord, type MemoryRow } from './rows.js';
import { cosineFromDistance } from './vectors.js';
import type { SqlValue, Where } from './where.js';
import { userKey } from './writes.js';

/** sqlite-vec answers at most this many neighbours per query. */
export const MAX_KNN = 4096;

/** Where queries get their prepared statements. */
export interface Statements {
  sql(text: string): Statement;
  /** The same, returning rows as arrays: every query reading RECORD_COLUMNS uses these. */
  raw(text: string): Statement;
}

/** A neighbour: a memory's row and its cosine with the query. */
export interface Neighbour {
  rowid: number;
  score: number;
}

/** The `k` nearest neighbours in the query's user partition (all of them when there is no user), best first. */
export type NeighbourSource = (k: number) => Neighbour[];

/** The partition (user key) a vector search stays in: its user's, or none when it has no user. */
export function partitionOf(scope: Scope): string | undefined {
  return scope.userId !== undefined ? userKey(scope.userId) : undefined;
}

/** Neighbours from sqlite-vec's scan of one user's partition, or of every vector. */
export function sqliteVecNeighbours(statements: Statements, table: string, blob: Buffer, partition: string | undefined): NeighbourSource {
  const knn = statements.sql(`SELECT rowid, distance FROM ${table} WHERE embedding MATCH ? AND k = ?${partition !== undefined ? ' AND user_key = ?' : ''}`);
  const partitionParams: SqlValue[] = partition !== undefined ? [partition] : [];
  return (k) =>
    (knn.all(blob, k, ...partitionParams) as { rowid: number; distance: number }[]).map((hit) => ({
      rowid: hit.rowid,
      score: cosineFromDistance(hit.distance),
    }));
}

/**
 * Neighbours from the in-memory copy of the vectors (vector-mirror.ts), grouped by user key like
 * sqlite-vec's partitions; `approximate`: through bit codes when the partition is large enough.
 */
export function mirrorNeighbours(index: FlatVectorIndex, query: Float32Array, partition: string | undefined, approximate: boolean): NeighbourSource {
  return (k) => index.nearest(query, k, partition, { approximate }).map((hit) => ({ rowid: hit.key, score: Math.max(-1, Math.min(1, hit.score)) }));
}

/**
 * The nearest neighbours inside the user's partition, then the rest of the
 * scope and the filter in SQL: more neighbours are asked for when SQL drops
 * some, and past MAX_KNN every matching vector is compared (`exact`).
 */
export function knnSearch(statements: Statements, nearest: NeighbourSource, where: Where, limit: number, exact: () => ScoredMemory[]): ScoredMemory[] {
  let k = where.beyondUser ? Math.min(MAX_KNN, Math.max(limit * 4, 64)) : Math.min(MAX_KNN, limit);
  for (;;) {
    const neighbours = nearest(k);
    const kept = where.beyondUser ? passing(statements, neighbours, where, limit) : neighbours;
    if (kept.length >= limit || neighbours.length < k) return withRecords(statements, kept.slice(0, limit));
    if (k >= MAX_KNN) return exact();
    k = Math.min(MAX_KNN, k * 4);
  }
}

/**
 * The neighbours in the scope and filter, in order, checked in SQL in two
 * steps: the nearest `4 * limit` (at least 16) first, which are most often
 * enough, then the rest.
 */
function passing(statements: Statements, neighbours: Neighbour[], where: Where, limit: number): Neighbour[] {
  // CROSS JOIN keeps SQLite on the neighbours' row ids: with `m.row_id IN (...)` it may scan the
  // whole user through the user index instead (10 ms for a user with 100,000 memories).
  const statement = statements.sql(`SELECT m.row_id FROM json_each(?) AS j CROSS JOIN memories m ON m.row_id = j.value WHERE ${where.sql}`);
  const check = (part: Neighbour[]): Neighbour[] => {
    const rows = statement.all(JSON.stringify(part.map((hit) => hit.rowid)), ...where.params) as { row_id: number }[];
    const passed = new Set(rows.map((row) => row.row_id));
    return part.filter((hit) => passed.has(hit.rowid));
  };
  const first = Math.max(limit * 4, 16);
  const kept = check(neighbours.slice(0, first));
  if (kept.length < limit && neighbours.length > first) kept.push(...check(neighbours.slice(first)));
  return kept;
}

/** Full records for the best neighbours only, scored by cosine. */
function withRecords(statements: Statements, hits: Neighbour[]): ScoredMemory[] {
  if (hits.length === 0) return [];
  const rows = statements.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.row_id IN (SELECT value FROM json_each(?))`).all(
    JSON.stringify(hits.map((hit) => hit.rowid)),
  ) as MemoryRow[];
  const score = new Map(hits.map((hit) => [hit.rowid, hit.score]));
  return rows.map((row) => ({ memory: rowToRecord(row), score: score.get(rowIdOf(row)) as number }));
}

/** Every vector in the scope and filter, compared one by one: for selective filters and very large limits. */
export function exactSearch(statements: Statements, table: string, blob: Buffer, where: Where, limit: number): ScoredMemory[] {
  const rows = statements.raw(
    `SELECT ${RECORD_COLUMNS}, vec_distance_l2(v.embedding, ?) AS distance FROM memories m JOIN ${table} v ON v.rowid = m.row_id
     WHERE ${where.sql} ORDER BY distance, m.id LIMIT ?`,
  ).all(blob, ...where.params, limit) as MemoryRow[];
  return rows.map((row) => ({ memory: rowToRecord(row), score: cosineFromDistance(row[AFTER_RECORD] as number) }));
}

/** Keyword search: the scope is in `match` (scope tokens); a filter, when given, joins the records. */
export function searchText(statements: Statements, match: string, where: Where, query: TextQuery): ScoredMemory[] {
  if (!query.filter) {
    // The scope is in the MATCH (scope tokens): rank inside FTS5, then read the records returned.
    // Ties (same terms, same length) go by row id, stored first first, here and with a filter below:
    // by rank alone the cut fell anywhere among them (by id it would sort every match, twice as slow).
    const hits = statements.sql('SELECT rowid, bm25(memory_text, 1.0, 0.0) AS rank FROM memory_text WHERE memory_text MATCH ? ORDER BY rank, rowid LIMIT ?').all(
      match,
      query.limit,
    ) as { rowid: number; rank: number }[];
    if (hits.length === 0) return [];
    const rows = statements.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.row_id IN (SELECT value FROM json_each(?))`).all(
      JSON.stringify(hits.map((hit) => hit.rowid)),
    ) as MemoryRow[];
    const byRowId = new Map(rows.map((row) => [rowIdOf(row), row]));
    // In the order FTS5 gave.
    return hits.flatMap((hit) => {
      const row = byRowId.get(hit.rowid);
      if (!row) return [];
      const memory = rowToRecord(row);
      return inScope(memory.scope, query.scope, query.exactScope) ? [{ memory, score: -hit.rank }] : [];
    });
  }
  // CROSS JOIN keeps the MATCH (which holds the scope) first. With a plain JOIN and two or more
  // metadata filters, SQLite walked the user's rows and ran the MATCH once per row: 309 ms instead
  // of 2.4 ms for a user with 2,000 memories.
  const rows = statements.raw(
    `SELECT ${RECORD_COLUMNS}, bm25(memory_text, 1.0, 0.0) AS rank FROM memory_text CROSS JOIN memories m ON m.row_id = memory_text.rowid
     WHERE memory_text MATCH ? AND ${where.sql} ORDER BY rank, m.row_id LIMIT ?`,
  ).all(match, ...where.params, query.limit) as MemoryRow[];
  return rows.map((row) => ({ memory: rowToRecord(row), score: -(row[AFTER_RECORD] as number) }));
}
