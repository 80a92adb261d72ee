import type { ListOrder, ListQuery, MemoryChange, MemoryPage, PageQuery, TextQuery } from './contracts.js';
import { describeValue, MemloomError } from './errors.js';
import { assertRecordScope } from './query-checks.js';
import { newIdProblem } from './records.js';
import { filterMatcher, inScope } from './scope.js';
import type { TextIndex } from './text/bm25.js';
import type { MemoryFilter, MemoryRecord, Scope, ScoredMemory } from './types.js';
import { dataPath, jsonDataProblem, MAX_STORED_DATA_DEPTH, type DataProblem } from './json-data.js';
import { isIsoTime } from './time-text.js';
import { isVectorArray, isZeroVector, nonFiniteIndex } from './vector.js';
import { hasLoneSurrogate, wellFormed } from './well-formed.js';

/**
 * The text a store indexes for a memory's keyword search: its content, then
 * the context it was said in (`MemoryRecord.context`) when it has one. With a
 * context, the content comes twice, so each content word counts twice as
 * much as a context word in BM25: a memory that says something ranks above
 * one that was merely said near it (on LoCoMo, recall@5 0.634 -> 0.662 with
 * context; three times measured the same as twice). Every store indexes this,
 * so a memory is found by the words of its context in every backend alike.
 */
export function keywordText(memory: Pick<MemoryRecord, 'content' | 'context'>): string {
  return memory.context ? `${memory.content}\n${memory.content}\n${memory.context}` : memory.content;
}

/**
 * For stores: the id of a memory a put CREATES (`expectedRevision` 0) follows `newIdProblem`'s rule (a string,
 * not blank, at most 256 characters, no control character or bidi control such as U+001B or U+202E),
 * INVALID_INPUT naming the character by code point and the backend otherwise, so every store refuses the same
 * new ids before writing anything. `assertPutChange` runs it on creating puts only: a memory a store already
 * holds (written before the rule, by 0.1.0) keeps its id, and a put that rewrites it only needs a string id.
 */
export function assertRecordId(memory: Pick<MemoryRecord, 'id'>, backend: string): void {
  const problem = newIdProblem(memory.id);
  if (problem) throw new MemloomError({ code: 'INVALID_INPUT', backend, message: problem, details: { field: 'id' } });
}

/**
 * For stores: a record's `context` is absent or a non-empty string (core
 * never writes another). Throws INVALID_INPUT naming the backend, so every
 * store refuses the same puts before writing anything.
 */
export function assertRecordContext(memory: Pick<MemoryRecord, 'id' | 'context'>, backend: string): void {
  const context: unknown = memory.context;
  if (context !== undefined && (typeof context !== 'string' || context === '')) {
    throw new MemloomError({
      code: 'INVALID_INPUT',
      backend,
      message: `memory ${memory.id}: context must be a non-empty string when given (leave the key out for none)`,
    });
  }
}

/**
 * For stores that keep text as UTF-8 (SQLite's columns, the JSON Qdrant's
 * server parses): a record whose id, scope values, content or context holds
 * a lone half of a UTF-16 pair is refused before anything is written
 * (INVALID_SCOPE for a scope value, INVALID_INPUT otherwise). UTF-8 cannot
 * hold one: SQLite would give it back as U+FFFD while the version's JSON kept
 * it, two ids or scope values would become one, and Qdrant's server refuses
 * such JSON. Core's facade never writes one (content and context are made
 * well formed, `validateScope` refuses them in scopes); a store that keeps
 * such text exactly (Markdown, in-memory) need not call this.
 */
export function assertWellFormedRecord(memory: Pick<MemoryRecord, 'id' | 'scope' | 'content' | 'context'>, backend: string): void {
  const refuse = (code: 'INVALID_INPUT' | 'INVALID_SCOPE', field: string): never => {
    throw new MemloomError({
      code,
      backend,
      message: `memory ${wellFormed(String(memory.id))}: ${field} holds a lone half of a UTF-16 pair (a string cut through an emoji), which this store cannot keep; core's wellFormed() replaces it with U+FFFD`,
      details: { field },
    });
  };
  if (typeof memory.id === 'string' && hasLoneSurrogate(memory.id)) refuse('INVALID_INPUT', 'id');
  for (const [key, value] of Object.entries(memory.scope ?? {})) if (typeof value === 'string' && hasLoneSurrogate(value)) refuse('INVALID_SCOPE', `scope.${key}`);
  if (typeof memory.content === 'string' && hasLoneSurrogate(memory.content)) refuse('INVALID_INPUT', 'content');
  if (typeof memory.context === 'string' && hasLoneSurrogate(memory.context)) refuse('INVALID_INPUT', 'context');
}

/**
 * For store authors: check a search or a read many as it arrives, so every
 * store refuses the same bad input with INVALID_INPUT naming the backend:
 * `limit` and `offset` whole numbers >= 0 (not NaN, 2.5, '3' or none, when
 * the key is given), `text` a string, `ids` an array of strings, `at` an
 * ISO 8601 time on a day the calendar has (`touch`: stores keep and order
 * times as written), `vector` an array of finite numbers that are not all
 * zero (a zero vector has no direction to compare; its dimension is the
 * store's to check). The scope and filter: `assertQueryScope`.
 */
export function assertQueryInput(
  input: { limit?: unknown; offset?: unknown; text?: unknown; ids?: unknown; at?: unknown; vector?: unknown },
  what: string,
  backend: string,
): void {
  const refuse = (message: string): never => {
    throw new MemloomError({ code: 'INVALID_INPUT', backend, message: `${what}: ${message}` });
  };
  for (const field of ['limit', 'offset'] as const) {
    const value = input[field];
    if (field in input && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) refuse(`${field} must be a whole number >= 0, got ${describeValue(value)}`);
  }
  if ('text' in input && typeof input.text !== 'string') refuse(`text must be a string, got ${typeof input.text}`);
  if ('ids' in input && (!Array.isArray(input.ids) || input.ids.some((id) => typeof id !== 'string'))) refuse('ids must be an array of strings');
  if ('at' in input && !isIsoTime(input.at)) refuse(`at must be an ISO 8601 time on a day the calendar has, such as 2024-03-01T09:00:00.000Z, got ${JSON.stringify(input.at)}`);
  if ('vector' in input) assertUsableVector(input.vector, `${what}: vector`, backend);
}

/**
 * For store authors: a vector to store (a put's, a re-index's) or to search with must be an array of finite
 * numbers that are not all zero: a zero vector has no direction to compare, and JSON or a float column cannot
 * keep NaN or Infinity. INVALID_INPUT naming `what` (`the vector of memory m1`) and the backend otherwise,
 * before anything is written. Its dimension is the store's to check (DIMENSION_MISMATCH).
 */
export function assertUsableVector(vector: unknown, what: string, backend: string): void {
  const refuse = (problem: string): never => {
    throw new MemloomError({ code: 'INVALID_INPUT', backend, message: `${what} ${problem}` });
  };
  if (!isVectorArray(vector)) return refuse('must be an array of numbers (an array, a Float32Array or a Float64Array)');
  const index = nonFiniteIndex(vector);
  if (index >= 0) refuse(`holds a value that is not a finite number (${describeValue(vector[index])}) at index ${index}`);
  if (isZeroVector(vector as ArrayLike<number>)) refuse('is all zeros and has no direction to compare');
}

/**
 * For store authors: the metadata of a put's records, the memory's and its version's `before` and `after`
 * (kept as its history), must each be a plain object of JSON data (`jsonDataProblem`: no Date, Map or class
 * instance, bigint, function, NaN, cycle, `undefined` in an array, …), which every store keeps exactly.
 * INVALID_INPUT naming the path of the bad value (`metadata.a.list[2]`, `version.after.metadata.when`) and
 * the backend otherwise, before anything is written. Core's facade never writes other metadata: it refuses
 * it, or converts a Date to text. Metadata shared by two of the records is walked once.
 */
export function assertRecordMetadata(
  change: { memory: Pick<MemoryRecord, 'id' | 'metadata'>; version?: { before?: Pick<MemoryRecord, 'metadata'> | null; after?: Pick<MemoryRecord, 'metadata'> } },
  backend: string,
): void {
  const { memory, version } = change;
  const records = [
    ['metadata', memory],
    ['version.before.metadata', version?.before],
    ['version.after.metadata', version?.after],
  ] as const;
  const checked = new Set<unknown>();
  for (const [root, record] of records) {
    // A version without its records is not this check's to refuse.
    if (typeof record !== 'object' || record === null || checked.has(record.metadata)) continue;
    const metadata: unknown = record.metadata;
    checked.add(metadata);
    const problem: DataProblem | undefined =
      typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) ? { path: [], problem: 'must be an object' } : jsonDataProblem(metadata, { maxDepth: MAX_STORED_DATA_DEPTH });
    if (!problem) continue;
    const field = dataPath(root, problem.path);
    throw new MemloomError({
      code: 'INVALID_INPUT',
      backend,
      message: `memory ${String(memory.id)}: ${field} ${problem.problem}`,
      details: { id: memory.id, field },
    });
  }
}

/**
 * For store authors: a put's numbers, checked before the store looks at
 * what it holds. `expectedRevision` must be a whole number >= 0 and
 * `memory.revision` and `version.version` both `expectedRevision + 1`:
 * INVALID_INPUT otherwise, whatever is stored (a caller's numbering mistake
 * must not pass for a race, which CONFLICT says).
 */
export function assertPutNumbering(change: { memory: Pick<MemoryRecord, 'id' | 'revision'>; expectedRevision: number; version: { version: number } }, backend: string): void {
  if (!change || typeof change !== 'object' || !change.memory || typeof change.memory !== 'object' || !change.version || typeof change.version !== 'object') {
    throw new MemloomError({ code: 'INVALID_INPUT', backend, message: 'a put needs a memory and a version' });
  }
  const { memory, expectedRevision, version } = change;
  if (!Number.isInteger(expectedRevision) || expectedRevision < 0) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend, message: `memory ${memory.id}: expectedRevision must be a whole number >= 0, got ${describeValue(expectedRevision)}` });
  }
  if (memory.revision !== expectedRevision + 1 || version?.version !== memory.revision) {
    throw new MemloomError({
      code: 'INVALID_INPUT',
      backend,
      message: `memory ${memory.id}: revision ${describeValue(memory.revision)} and version ${describeValue(version?.version)} must both be ${expectedRevision + 1}`,
    });
  }
}

/**
 * For store authors: the checks every store runs on a put, in one order, before it looks at what it holds:
 * the id (`assertRecordId` when the put creates the memory, `expectedRevision` 0; a string otherwise), the
 * numbering (`assertPutNumbering`, which also refuses a put without a memory or a version), the scope
 * (`assertRecordScope`, INVALID_SCOPE; a blank value only when the put creates the memory), the context
 * (`assertRecordContext`) and the metadata (`assertRecordMetadata`), INVALID_INPUT otherwise, naming the backend. Call it on every put of a
 * batch before writing anything, then add the store's own checks: well-formed text (`assertWellFormedRecord`)
 * where text is kept as UTF-8, times (`assertRecordTimes`) where they are kept as text, and the vector's
 * dimension (DIMENSION_MISMATCH) before `assertUsableVector`. All of them come before any revision is
 * compared: a put of bad input is refused for it (INVALID_INPUT, INVALID_SCOPE, DIMENSION_MISMATCH) even
 * when it is also stale, and CONFLICT means only that someone else changed the memory.
 */
export function assertPutChange(change: Extract<MemoryChange, { op: 'put' }>, backend: string): void {
  // The rules for new ids and scopes hold for a memory the put creates; one a store holds already (written
  // before them) stays maintainable. Decided by the put itself, never by what is stored.
  const creates = change?.expectedRevision === 0;
  // The id first: the messages of the checks after it name the memory by its id.
  const memory = change?.memory as Partial<MemoryRecord> | null | undefined;
  if (typeof memory === 'object' && memory !== null) {
    if (creates) assertRecordId(memory as MemoryRecord, backend);
    else if (typeof memory.id !== 'string') {
      throw new MemloomError({ code: 'INVALID_INPUT', backend, message: `a memory id must be a string, got ${describeValue(memory.id)}`, details: { field: 'id' } });
    }
  }
  assertPutNumbering(change, backend);
  assertRecordScope(change.memory, backend, creates);
  assertRecordContext(change.memory, backend);
  assertRecordMetadata(change, backend);
}

/**
 * For store authors: a record's times must be ISO 8601 timestamps (what core
 * writes) on days the calendar has (not 2024-02-30, which a Date reads as
 * March 1): INVALID_INPUT naming the field otherwise, before anything is
 * written. A store whose files hold the times as text (Markdown) would
 * otherwise write a file it cannot read back.
 */
export function assertRecordTimes(memory: Pick<MemoryRecord, 'id' | 'createdAt' | 'updatedAt' | 'lastAccessedAt'>, backend: string): void {
  for (const field of ['createdAt', 'updatedAt', 'lastAccessedAt'] as const) {
    const value: unknown = memory[field];
    if (value === undefined && field === 'lastAccessedAt') continue;
    if (!isIsoTime(value)) {
      throw new MemloomError({
        code: 'INVALID_INPUT',
        backend,
        message: `memory ${memory.id}: ${field} must be an ISO 8601 time on a day the calendar has, such as 2024-03-01T09:00:00.000Z, got ${JSON.stringify(value)}`,
      });
    }
  }
}


/**
 * Queries over records held in process (core's in-memory store, the Markdown
 * store's loaded files), so every such store filters, orders and ranks alike.
 */
export interface RecordEntry {
  readonly record: MemoryRecord;
}

/** Records in scope that pass the filter (not copied). */
export function matchingRecords(entries: Iterable<RecordEntry>, scope: Scope | undefined, filter: MemoryFilter | undefined, exact?: boolean): MemoryRecord[] {
  const records: MemoryRecord[] = [];
  const matches = filterMatcher(filter);
  for (const entry of entries) {
    if (inScope(entry.record.scope, scope, exact) && matches(entry.record)) records.push(entry.record);
  }
  return records;
}

/** `list` semantics: order (ties by id; `stored`: the entries' own order), after, offset, limit; copies. */
export function listRecords(entries: Iterable<RecordEntry>, query: ListQuery, backend: string): MemoryRecord[] {
  const key = query.orderBy ?? 'createdAt';
  const direction = query.direction ?? 'asc';
  const cursor = listCursor(query, backend);
  let records = matchingRecords(entries, query.scope, query.filter, query.exactScope);
  if (key === 'stored') {
    if (direction === 'desc') records.reverse();
  } else {
    records.sort(listOrder(key, direction));
    if (cursor) records = records.filter(pastCursor(cursor, direction));
  }
  const offset = query.offset ?? 0;
  const end = query.limit === undefined ? undefined : offset + query.limit;
  return records.slice(offset, end).map((record) => structuredClone(record));
}

/** What a `list` order reads of a memory. */
export type ListPlace = Pick<MemoryRecord, 'id' | 'createdAt' | 'updatedAt'>;

/** For stores that sort in process: `list`'s order by `key`, ties by id, both in `direction`. */
export function listOrder(key: Exclude<ListOrder, 'stored'>, direction: 'asc' | 'desc'): (a: ListPlace, b: ListPlace) => number {
  const sign = direction === 'desc' ? -1 : 1;
  return (a, b) => {
    const primary = a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
    return sign * (primary || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };
}

/** For stores that filter in process: whether a memory comes after the cursor in its order. */
export function pastCursor(cursor: ListCursor, direction: 'asc' | 'desc'): (record: ListPlace) => boolean {
  const place: ListPlace = { id: cursor.id, createdAt: cursor.value, updatedAt: cursor.value };
  const compare = listOrder(cursor.key, direction);
  return (record) => compare(record, place) > 0;
}

/** A `list` query's `after`, checked: the field ordered by, its value, and the id. */
export interface ListCursor {
  key: Exclude<ListOrder, 'stored'>;
  value: string;
  id: string;
}

/**
 * For stores: a `list` query's `after`, checked (INVALID_INPUT names the
 * backend), or undefined when it has none. A timestamp is kept as given, the
 * text the memory it came from holds: stores order timestamps as text, and
 * that memory must compare equal to it.
 */
export function listCursor(query: ListQuery, backend: string): ListCursor | undefined {
  const after: unknown = query.after;
  if (after === undefined) return undefined;
  const key = query.orderBy ?? 'createdAt';
  const refuse = (why: string) => new MemloomError({ code: 'INVALID_INPUT', backend, message: `list: after ${why}` });
  if (key === 'stored') throw refuse("does not go with orderBy 'stored': listPage pages the store's own order");
  if (typeof after !== 'object' || after === null) throw refuse('must be a memory (its id and the field ordered by)');
  const { id } = after as { id?: unknown };
  if (typeof id !== 'string' || id === '') throw refuse('needs the id of a memory');
  if (key === 'id') return { key, value: id, id };
  const value: unknown = (after as Record<string, unknown>)[key];
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw refuse(`needs the ${key} of the memory it names (a timestamp), not ${JSON.stringify(value)}`);
  }
  return { key, value, id };
}

/**
 * An entry that knows its place in its store's order: `seq` is given when the
 * memory first enters the store, grows with each new memory, and stays
 * through updates, so held in a `Map` (which keeps keys in the order first
 * set) the entries run in `seq` order.
 */
export interface SequencedEntry extends RecordEntry {
  readonly seq: number;
}

/**
 * `listPage` semantics over entries held in `seq` order: the cursor is the
 * last `seq` given, so deleting that memory, or any before it, moves nothing.
 */
export function pageRecords(entries: Iterable<SequencedEntry>, query: PageQuery, backend: string): MemoryPage {
  const { limit, after } = numericPageQuery(query, backend);
  const memories: MemoryRecord[] = [];
  const matches = filterMatcher(query.filter);
  for (const entry of entries) {
    if (entry.seq <= after || !inScope(entry.record.scope, query.scope, query.exactScope) || !matches(entry.record)) continue;
    memories.push(structuredClone(entry.record));
    if (memories.length === limit) return { memories, next: String(entry.seq) };
  }
  return { memories };
}

/**
 * A `listPage` query's limit and its cursor read as a number, for stores
 * whose places are counted (0 when `after` is absent). Both come from outside
 * the store and are checked: INVALID_INPUT names the backend.
 */
export function numericPageQuery(query: PageQuery, backend: string): { limit: number; after: number } {
  const limit = pageLimit(query, backend);
  if (query.after === undefined) return { limit, after: 0 };
  if (typeof query.after !== 'string' || !/^\d{1,15}$/.test(query.after)) throw foreignCursor(query.after, backend);
  return { limit, after: Number(query.after) };
}

/** A `listPage` query's limit, checked (INVALID_INPUT names the backend): for every store, whatever its cursor. */
export function pageLimit(query: PageQuery, backend: string): number {
  if (!Number.isInteger(query.limit) || query.limit < 1) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend, message: `listPage needs a limit that is an integer of at least 1, not ${describeValue(query.limit)}` });
  }
  return query.limit;
}

/** The error for an `after` that is not a `next` this store gives. */
export function foreignCursor(after: unknown, backend: string): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend, message: `listPage: ${JSON.stringify(after)} is not a page's next from this store` });
}

/** `textSearch` semantics over a BM25 index of the entries' content: in scope, filtered, best first; copies. */
export function searchTextIndex(index: TextIndex, entries: ReadonlyMap<string, RecordEntry>, query: TextQuery): ScoredMemory[] {
  const matches = filterMatcher(query.filter);
  const accept = (id: string) => {
    const record = entries.get(id)?.record;
    return !!record && inScope(record.scope, query.scope, query.exactScope) && matches(record);
  };
  return index.search(query.text, query.limit, accept).map((hit) => ({
    memory: structuredClone((entries.get(hit.id) as RecordEntry).record),
    score: hit.score,
  }));
}
