import type {
  ListQuery,
  MemoryChange,
  MemoryPage,
  MemoryStore,
  PageQuery,
  ReindexStatus,
  StagedVector,
  StoreOpenOptions,
  TextQuery,
  VectorQuery,
} from '../contracts.js';
import { MemloomError } from '../errors.js';
import { jsonCopy } from '../json-data.js';
import { assertPutChange, assertQueryInput, assertUsableVector, keywordText, listRecords, matchingRecords, pageRecords, searchTextIndex } from '../record-queries.js';
import { assertDeleteScope, assertQueryScope } from '../query-checks.js';
import { filterMatcher, inScope } from '../scope.js';
import { byScoreThenId } from '../score-order.js';
import { TextIndex } from '../text/bm25.js';
import type { MemoryFilter, MemoryRecord, MemoryVersion, Scope, ScoredMemory } from '../types.js';
import { cosineSimilarity } from '../vector.js';

interface Entry {
  record: MemoryRecord;
  vector: number[];
  /** Its place in the store's order (see SequencedEntry). */
  seq: number;
}

/**
 * A store that keeps everything in process memory: exact cosine search over
 * every vector and BM25 keyword search. For tests, demos and small
 * single-process apps; nothing survives `close()`.
 */
export function createInMemoryStore(): MemoryStore {
  return new InMemoryStore();
}

class InMemoryStore implements MemoryStore {
  readonly name = 'memory';
  readonly capabilities = { textSearch: true, persistent: false, multiProcess: false, reindex: true, listPage: true, listAfter: true, readMany: true };
  private readonly entries = new Map<string, Entry>();
  /** The last `seq` given. */
  private lastSeq = 0;
  private readonly versions = new Map<string, MemoryVersion[]>();
  private readonly text = new TextIndex();
  private dimension: number | undefined;
  private embedderId: string | undefined;
  private closed = false;
  /** A re-index in progress: its target and the vectors staged for it so far. */
  private next: { target: StoreOpenOptions; vectors: Map<string, number[]> } | undefined;

  async open(options: StoreOpenOptions): Promise<void> {
    this.assertOpen();
    if (this.dimension !== undefined && this.dimension !== options.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        backend: this.name,
        message: `store holds vectors of dimension ${this.dimension}; the embedder gives ${options.dimension}`,
      });
    }
    if (this.embedderId !== undefined && this.embedderId !== options.embedderId) {
      throw new MemloomError({
        code: 'EMBEDDER_MISMATCH',
        backend: this.name,
        message: `store was indexed by ${this.embedderId}, not ${options.embedderId}; re-index to switch`,
      });
    }
    this.dimension = options.dimension;
    this.embedderId = options.embedderId;
  }

  async get(id: string): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    const entry = this.entries.get(id);
    return entry ? structuredClone(entry.record) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<MemoryRecord[]> {
    this.assertOpen();
    assertQueryInput({ ids }, 'getMany', this.name);
    return ids.flatMap((id) => {
      const entry = this.entries.get(id);
      return entry ? [structuredClone(entry.record)] : [];
    });
  }

  async list(query: ListQuery): Promise<MemoryRecord[]> {
    this.assertOpen();
    assertQueryScope(query, 'list', this.name);
    return listRecords(this.entries.values(), query, this.name);
  }

  async listPage(query: PageQuery): Promise<MemoryPage> {
    this.assertOpen();
    assertQueryScope(query, 'listPage', this.name);
    return pageRecords(this.entries.values(), query, this.name);
  }

  async count(query: { scope?: Scope; filter?: MemoryFilter }): Promise<number> {
    this.assertOpen();
    assertQueryScope(query, 'count', this.name);
    return matchingRecords(this.entries.values(), query.scope, query.filter, false).length;
  }

  async vectorSearch(query: VectorQuery): Promise<ScoredMemory[]> {
    this.assertOpen();
    assertQueryScope(query, 'vectorSearch', this.name);
    assertQueryInput({ limit: query.limit, vector: query.vector }, 'vectorSearch', this.name);
    this.checkDimension(query.vector);
    const hits: ScoredMemory[] = [];
    const matches = filterMatcher(query.filter);
    for (const entry of this.entries.values()) {
      if (!inScope(entry.record.scope, query.scope, query.exactScope) || !matches(entry.record)) continue;
      hits.push({ memory: entry.record, score: cosineSimilarity(query.vector, entry.vector) });
    }
    return hits
      .sort(byScoreThenId)
      .slice(0, query.limit)
      .map((hit) => ({ memory: structuredClone(hit.memory), score: hit.score }));
  }

  async textSearch(query: TextQuery): Promise<ScoredMemory[]> {
    this.assertOpen();
    assertQueryScope(query, 'textSearch', this.name);
    assertQueryInput({ limit: query.limit, text: query.text }, 'textSearch', this.name);
    return searchTextIndex(this.text, this.entries, query);
  }


  async apply(changes: readonly MemoryChange[]): Promise<void> {
    this.assertOpen();
    // Check everything first, then mutate synchronously: all or nothing.
    // A put numbered wrong, a record no store keeps (its id, scope, context, metadata) or a vector no store
    // keeps is the caller's mistake whatever is stored: refused before any revision is compared.
    for (const change of changes) {
      if (change?.op !== 'put') continue;
      assertPutChange(change, this.name);
      if (change.vector !== undefined) {
        this.checkDimension(change.vector);
        assertUsableVector(change.vector, `the vector of memory ${change.memory.id}`, this.name);
      }
    }
    const seen = new Map<string, number | undefined>();
    for (const change of changes) {
      const id = changeId(change);
      const current = seen.has(id) ? seen.get(id) : this.entries.get(id)?.record.revision;
      if (change.op === 'delete') {
        if (change.expectedRevision !== undefined && current !== change.expectedRevision) throw this.conflict(id);
        seen.set(id, undefined);
        continue;
      }
      const { memory } = change;
      if ((current ?? 0) !== change.expectedRevision) throw this.conflict(memory.id);
      if (change.vector === undefined && current === undefined) {
        throw new MemloomError({ code: 'INVALID_INPUT', backend: this.name, message: `memory ${memory.id} is new and needs a vector` });
      }
      seen.set(memory.id, memory.revision);
    }
    for (const change of changes) {
      if (change.op === 'delete') {
        this.entries.delete(change.id);
        this.versions.delete(change.id);
        this.text.delete(change.id);
        this.next?.vectors.delete(change.id);
        continue;
      }
      const previous = this.entries.get(change.memory.id);
      const vector = change.vector ? [...change.vector] : (previous as Entry).vector;
      if (change.vector) this.next?.vectors.delete(change.memory.id);
      // Kept as the stores that write JSON give it back (-0 as 0, no key holding undefined): the same reads in every store.
      this.entries.set(change.memory.id, { record: jsonCopy(change.memory), vector, seq: previous?.seq ?? ++this.lastSeq });
      const history = this.versions.get(change.memory.id) ?? [];
      history.push(jsonCopy(change.version));
      this.versions.set(change.memory.id, history);
      this.text.set(change.memory.id, keywordText(change.memory));
    }
  }

  async deleteByScope(scope: Scope): Promise<number> {
    this.assertOpen();
    assertDeleteScope(scope, this.name);
    const doomed = matchingRecords(this.entries.values(), scope, undefined, false);
    for (const record of doomed) {
      this.entries.delete(record.id);
      this.versions.delete(record.id);
      this.text.delete(record.id);
      this.next?.vectors.delete(record.id);
    }
    return doomed.length;
  }

  async history(id: string): Promise<MemoryVersion[]> {
    this.assertOpen();
    return structuredClone(this.versions.get(id) ?? []);
  }

  async getVector(id: string): Promise<number[] | undefined> {
    this.assertOpen();
    const entry = this.entries.get(id);
    return entry ? [...entry.vector] : undefined;
  }

  async historyMany(ids: readonly string[]): Promise<MemoryVersion[][]> {
    this.assertOpen();
    return ids.map((id) => structuredClone(this.versions.get(id) ?? []));
  }

  async getVectors(ids: readonly string[]): Promise<(number[] | undefined)[]> {
    this.assertOpen();
    return ids.map((id) => {
      const entry = this.entries.get(id);
      return entry ? [...entry.vector] : undefined;
    });
  }

  async touch(ids: readonly string[], at: string): Promise<void> {
    this.assertOpen();
    assertQueryInput({ ids, at }, 'touch', this.name);
    for (const id of ids) {
      const entry = this.entries.get(id);
      if (entry) entry.record = { ...entry.record, lastAccessedAt: at };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  async beginReindex(target: StoreOpenOptions): Promise<ReindexStatus> {
    this.assertOpen();
    if (!this.next || this.next.target.dimension !== target.dimension || this.next.target.embedderId !== target.embedderId) {
      this.next = { target: { ...target }, vectors: new Map() };
    }
    return { target: { ...this.next.target }, done: this.next.vectors.size, total: this.entries.size };
  }

  async pendingReindex(limit: number): Promise<MemoryRecord[]> {
    this.assertOpen();
    assertQueryInput({ limit }, 'pendingReindex', this.name);
    const next = this.requireReindex();
    const pending: MemoryRecord[] = [];
    for (const [id, entry] of this.entries) {
      if (pending.length >= limit) break;
      if (!next.vectors.has(id)) pending.push(structuredClone(entry.record));
    }
    return pending;
  }

  async stageReindex(vectors: readonly StagedVector[]): Promise<number> {
    this.assertOpen();
    const next = this.requireReindex();
    for (const staged of vectors) {
      if (staged.vector.length !== next.target.dimension) {
        throw new MemloomError({
          code: 'DIMENSION_MISMATCH',
          backend: this.name,
          message: `vector of dimension ${staged.vector.length}; the re-index target holds ${next.target.dimension}`,
        });
      }
      assertUsableVector(staged.vector, `the re-index vector of memory ${staged.id}`, this.name);
    }
    let kept = 0;
    for (const staged of vectors) {
      if (this.entries.get(staged.id)?.record.revision !== staged.revision) continue;
      next.vectors.set(staged.id, [...staged.vector]);
      kept++;
    }
    return kept;
  }

  async commitReindex(): Promise<void> {
    this.assertOpen();
    const next = this.requireReindex();
    const pending = [...this.entries.keys()].filter((id) => !next.vectors.has(id)).length;
    if (pending > 0) {
      throw new MemloomError({
        code: 'CONFLICT',
        backend: this.name,
        message: `${pending} memories have no vector from ${next.target.embedderId} yet; run reindex() again`,
      });
    }
    for (const [id, entry] of this.entries) entry.vector = next.vectors.get(id) as number[];
    this.dimension = next.target.dimension;
    this.embedderId = next.target.embedderId;
    this.next = undefined;
  }

  async abortReindex(): Promise<void> {
    this.assertOpen();
    this.next = undefined;
  }

  private checkDimension(vector: readonly number[]): void {
    if (this.dimension !== undefined && vector.length !== this.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        backend: this.name,
        message: `vector of dimension ${vector.length}; this store holds ${this.dimension}`,
      });
    }
  }

  private requireReindex(): { target: StoreOpenOptions; vectors: Map<string, number[]> } {
    if (!this.next) throw new MemloomError({ code: 'INVALID_INPUT', backend: this.name, message: 'no re-index in progress; call beginReindex first' });
    return this.next;
  }

  private conflict(id: string): MemloomError {
    return new MemloomError({ code: 'CONFLICT', backend: this.name, message: `memory ${id} was changed by someone else`, details: { id } });
  }

  private assertOpen(): void {
    if (this.closed) throw new MemloomError({ code: 'CLOSED', backend: this.name, message: 'store is closed' });
  }
}

function changeId(change: MemoryChange): string {
  return change.op === 'delete' ? change.id : change.memory.id;
}
