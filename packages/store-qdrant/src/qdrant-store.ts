import {
  assertDeleteScope,
  assertQueryInput,
  assertQueryScope,
  byScoreThenId,
  foreignCursor,
  listCursor,
  listOrder,
  MemloomError,
  pageLimit,
  pastCursor,
  type ListCursor,
  type ListQuery,
  type MemoryChange,
  type MemoryFilter,
  type MemoryPage,
  type MemoryRecord,
  type MemoryStore,
  type MemoryVersion,
  type PageQuery,
  type Scope,
  type ScoredMemory,
  type StoreCapabilities,
  type StoreOpenOptions,
  type TextQuery,
  type VectorQuery,
} from '@memloom/core';
import { applyChanges } from './apply.js';
import { chunks, DECIDING_READ, denseVectorOf, retrieveAll, scrollAll, type Backend, type Filter, type PointRecord } from './backend.js';
import { createClient } from './client.js';
import { prepareCollection } from './collection-setup.js';
import { memoryFilter, versionsOfMany } from './filters.js';
import { chainOf, deleteVersionChains, entriesOf, versionChain } from './history.js';
import { resolveOptions, type QdrantStoreOptions } from './options.js';
import { fromMemoryPayload, fromVersionPayload, type MemoryPayload, type VersionPayload } from './payload.js';
import { memoryPointId } from './point-ids.js';
import { createCaller, WRITE, writtenUnlessForbidden } from './retry.js';
import { queryVector } from './sparse-text.js';

/**
 * A memloom store on Qdrant: one collection holds every memory (dense vector,
 * BM25 sparse vector and the record as payload), every version, and one
 * metadata point. Scope and field filters run inside Qdrant, with a tenant
 * index on userId.
 */
export function createQdrantStore(options: QdrantStoreOptions = {}): MemoryStore {
  const resolved = resolveOptions(options);
  const client = resolved.client ?? createClient({ url: resolved.url, apiKey: resolved.apiKey, timeoutMs: resolved.timeoutMs });
  // The URL and timeout are named when the server cannot be reached; a client given ready-made has its own.
  const url = resolved.client ? undefined : resolved.url;
  const urlSource = resolved.client ? undefined : resolved.urlSource;
  const call = createCaller(resolved.retry, { collection: resolved.collection, url, urlSource, timeoutMs: resolved.client ? undefined : resolved.timeoutMs });
  return new QdrantStore({ client, call, options: resolved, collection: resolved.collection, url, urlSource });
}

type OrderKey = NonNullable<ListQuery['orderBy']>;
const ORDER_FIELDS: Record<Exclude<OrderKey, 'id' | 'stored'>, 'createdAtMs' | 'updatedAtMs'> = { createdAt: 'createdAtMs', updatedAt: 'updatedAtMs' };

class QdrantStore implements MemoryStore {
  readonly name = 'qdrant';
  readonly capabilities: StoreCapabilities = { textSearch: true, persistent: true, multiProcess: true, listPage: true, listAfter: true, readMany: true };
  private dimension: number | undefined;
  private closed = false;

  constructor(private readonly backend: Backend) {}

  async open(options: StoreOpenOptions): Promise<void> {
    this.assertOpen();
    if (!Number.isInteger(options?.dimension) || options.dimension <= 0 || typeof options.embedderId !== 'string' || options.embedderId === '') {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: this.name, message: 'open needs a positive integer dimension and an embedderId' });
    }
    await prepareCollection(this.backend, options);
    this.dimension = options.dimension;
  }

  async get(id: string): Promise<MemoryRecord | undefined> {
    return (await this.getMany([id]))[0];
  }

  async getMany(ids: readonly string[]): Promise<MemoryRecord[]> {
    this.assertOpen();
    assertQueryInput({ ids }, 'getMany', this.name);
    if (ids.length === 0) return [];
    const points = await retrieveAll(this.backend, 'get memories', [...new Set(ids)].map(memoryPointId), {
      withPayload: true,
      consistency: this.backend.options.readConsistency,
    });
    const byId = new Map(points.map((point) => [String(point.id), point]));
    return ids.flatMap((id) => {
      const point = byId.get(memoryPointId(id));
      return point ? [fromMemoryPayload(point.payload)] : [];
    });
  }

  async list(query: ListQuery): Promise<MemoryRecord[]> {
    this.assertOpen();
    assertQueryScope(query, 'list', this.name);
    const filter = memoryFilter(query.scope, query.filter, query.exactScope);
    const key = query.orderBy ?? 'createdAt';
    const direction = query.direction ?? 'asc';
    const offset = query.offset ?? 0;
    const cursor = listCursor(query, this.name);
    if (query.limit !== undefined && query.limit <= 0) return [];
    if (key === 'stored' || key === 'id' || query.limit === undefined) {
      // Qdrant cannot order by a string field: read the scope, sort here ('stored' keeps the scroll's
      // order, by point id). Filtering still happens in Qdrant.
      let records = await this.scroll('list memories', filter);
      if (key !== 'stored') records.sort(listOrder(key, direction));
      else if (direction === 'desc') records.reverse();
      if (cursor) records = records.filter(pastCursor(cursor, direction));
      return records.slice(offset, query.limit === undefined ? undefined : offset + query.limit);
    }
    return this.listOrdered(filter, key, direction, offset, query.limit, cursor);
  }

  /**
   * Qdrant's scroll order (by point id), resumed from the point id Qdrant
   * names as the next page's start (`next_page_offset`): a scroll from an id
   * whose point has since been deleted starts at the first id after it, so
   * the place holds through writes. Each request reads `batchSize` points.
   */
  async listPage(query: PageQuery): Promise<MemoryPage> {
    this.assertOpen();
    assertQueryScope(query, 'listPage', this.name);
    const limit = pageLimit(query, this.name);
    if (query.after !== undefined && (typeof query.after !== 'string' || !UUID.test(query.after))) throw foreignCursor(query.after, this.name);
    const filter = memoryFilter(query.scope, query.filter, query.exactScope);
    const memories: MemoryRecord[] = [];
    let offset = query.after;
    while (memories.length < limit) {
      const page = await this.backend.call('list memories', () =>
        this.backend.client.scroll(this.backend.collection, {
          filter,
          limit: Math.min(this.backend.options.batchSize, limit - memories.length),
          with_payload: true,
          with_vector: false,
          ...(offset !== undefined ? { offset } : {}),
          ...(this.backend.options.readConsistency !== undefined ? { consistency: this.backend.options.readConsistency } : {}),
        }),
      );
      for (const point of page.points) memories.push(fromMemoryPayload(point.payload));
      const next = page.next_page_offset;
      if (typeof next !== 'string') return { memories };
      offset = next;
    }
    return { memories, next: offset as string };
  }

  async count(query: { scope?: Scope; filter?: MemoryFilter }): Promise<number> {
    this.assertOpen();
    assertQueryScope(query, 'count', this.name);
    const result = await this.backend.call('count memories', () =>
      this.backend.client.count(this.backend.collection, { filter: memoryFilter(query.scope, query.filter), exact: true }),
    );
    return result.count;
  }

  async vectorSearch(query: VectorQuery): Promise<ScoredMemory[]> {
    this.assertOpen();
    assertQueryScope(query, 'vectorSearch', this.name);
    assertQueryInput({ limit: query.limit, vector: query.vector }, 'vectorSearch', this.name);
    if (this.dimension !== undefined && query.vector.length !== this.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        backend: this.name,
        message: `query vector of dimension ${query.vector.length}; this store holds ${this.dimension}`,
      });
    }
    if (query.limit <= 0) return [];
    return this.search('vector search', { query: [...query.vector], using: 'dense' }, memoryFilter(query.scope, query.filter, query.exactScope), query.limit);
  }

  async textSearch(query: TextQuery): Promise<ScoredMemory[]> {
    this.assertOpen();
    assertQueryScope(query, 'textSearch', this.name);
    assertQueryInput({ limit: query.limit, text: query.text }, 'textSearch', this.name);
    const sparse = queryVector(query.text);
    if (!sparse || query.limit <= 0) return [];
    const hits = await this.search('text search', { query: sparse, using: 'text' }, memoryFilter(query.scope, query.filter, query.exactScope), query.limit);
    // Sparse search only scores points sharing a term; IDF keeps those scores above zero.
    return hits.filter((hit) => hit.score > 0);
  }

  async apply(changes: readonly MemoryChange[]): Promise<void> {
    this.assertOpen();
    await applyChanges(this.backend, this.dimension, changes);
  }

  async deleteByScope(scope: Scope): Promise<number> {
    this.assertOpen();
    assertDeleteScope(scope, this.name);
    const { backend } = this;
    let deleted = 0;
    // Page through the memories in scope, deleting them first, then the versions on their chains
    // (by point id: a memory another writer creates again under the same id keeps its own).
    for (;;) {
      const page = await backend.call('find memories to delete', () =>
        backend.client.scroll(backend.collection, {
          filter: memoryFilter(scope),
          limit: backend.options.batchSize,
          with_payload: ['id', 'writeId'],
          with_vector: false,
          ...(backend.options.readConsistency !== undefined ? { consistency: backend.options.readConsistency } : {}),
        }),
      );
      if (page.points.length === 0) return deleted;
      const heads = page.points.flatMap((point) => {
        const payload = point.payload as Partial<MemoryPayload> | null | undefined;
        return typeof payload?.id === 'string' && typeof payload.writeId === 'string' ? [{ id: payload.id, writeId: payload.writeId }] : [];
      });
      await backend.call('delete memories', () =>
        backend.client.delete(backend.collection, { wait: true, ordering: backend.options.writeOrdering, points: page.points.map((point) => point.id) }),
        WRITE,
      );
      await deleteVersionChains(backend, heads);
      deleted += page.points.length;
    }
  }

  async history(id: string): Promise<MemoryVersion[]> {
    this.assertOpen();
    const [point] = await retrieveAll(this.backend, 'read memory', [memoryPointId(id)], {
      withPayload: ['writeId'],
      consistency: this.backend.options.readConsistency,
    });
    const head = (point?.payload as Partial<MemoryPayload> | null | undefined)?.writeId;
    if (typeof head !== 'string') return [];
    try {
      return entriesOf(await versionChain(this.backend, id, head));
    } catch (error) {
      // A replica that has the memory but not yet its newest version (write consistency below the
      // replication factor) looks like a broken chain: ask the majority before calling it corrupt.
      if (!MemloomError.hasCode(error, 'STORE_CORRUPT')) throw error;
      return entriesOf(await versionChain(this.backend, id, head, DECIDING_READ));
    }
  }

  /**
   * The memories' heads in `batchSize` ids per request, then the version points of those that
   * exist, `batchSize` memories per filter: a few requests for a page of a copy or an export
   * instead of two per memory. A chain that does not close (a replica behind) is read again
   * alone, as `history` reads it.
   */
  async historyMany(ids: readonly string[]): Promise<MemoryVersion[][]> {
    this.assertOpen();
    if (ids.length === 0) return [];
    const { backend } = this;
    const heads = new Map<string, string>();
    for (const point of await retrieveAll(backend, 'read memory', [...new Set(ids)].map(memoryPointId), {
      withPayload: ['id', 'writeId'],
      consistency: backend.options.readConsistency,
    })) {
      const payload = point.payload as Partial<MemoryPayload> | null | undefined;
      if (typeof payload?.id === 'string' && typeof payload.writeId === 'string') heads.set(payload.id, payload.writeId);
    }
    const versions = new Map<string, VersionPayload[]>();
    for (const chunk of chunks([...heads.keys()], backend.options.batchSize)) {
      for (const point of await scrollAll(backend, 'read versions', versionsOfMany(chunk), true, backend.options.readConsistency)) {
        const version = fromVersionPayload(point.payload);
        const list = versions.get(version.memoryId) ?? [];
        if (list.length === 0) versions.set(version.memoryId, list);
        list.push(version);
      }
    }
    const histories = new Map<string, MemoryVersion[]>();
    for (const [id, head] of heads) {
      try {
        histories.set(id, entriesOf(chainOf(id, head, versions.get(id) ?? [])));
      } catch (error) {
        if (!MemloomError.hasCode(error, 'STORE_CORRUPT')) throw error;
        histories.set(id, await this.history(id));
      }
    }
    return ids.map((id) => structuredClone(histories.get(id) ?? []));
  }

  /** The vectors in `batchSize` ids per request. */
  async getVectors(ids: readonly string[]): Promise<(number[] | undefined)[]> {
    this.assertOpen();
    if (ids.length === 0) return [];
    const points = await retrieveAll(this.backend, 'read vectors', [...new Set(ids)].map(memoryPointId), {
      withPayload: false,
      withVector: ['dense'],
      consistency: this.backend.options.readConsistency,
    });
    const byPoint = new Map(points.map((point) => [String(point.id), denseVectorOf(point)]));
    return ids.map((id) => {
      const vector = byPoint.get(memoryPointId(id));
      return vector ? [...vector] : undefined;
    });
  }

  async getVector(id: string): Promise<number[] | undefined> {
    this.assertOpen();
    const [point] = await retrieveAll(this.backend, 'read vector', [memoryPointId(id)], {
      withPayload: false,
      withVector: ['dense'],
      consistency: this.backend.options.readConsistency,
    });
    return point ? denseVectorOf(point) : undefined;
  }

  async touch(ids: readonly string[], at: string): Promise<void | false> {
    this.assertOpen();
    assertQueryInput({ ids, at }, 'touch', this.name);
    if (ids.length === 0) return;
    const { backend } = this;
    // A key that may only read searches too, as a file SQLite may not write is searched: recording no access time.
    const recorded = await writtenUnlessForbidden(() =>
      // A filter (not a list of points) so unknown ids are skipped instead of failing the call.
      backend.call(
        'touch memories',
        () =>
          backend.client.setPayload(backend.collection, {
            wait: true,
            // Every write to a point carries the same ordering: writes of different orderings may be applied in another order on each replica.
            ordering: backend.options.writeOrdering,
            payload: { lastAccessedAt: at },
            filter: { must: [{ has_id: [...new Set(ids)].map(memoryPointId) }, { key: 'kind', match: { value: 'memory' } }] },
          }),
        WRITE,
      ),
    );
    if (!recorded) return false;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async search(operation: string, request: { query: number[] | { indices: number[]; values: number[] }; using: string }, filter: Filter, limit: number): Promise<ScoredMemory[]> {
    const { backend } = this;
    const response = await backend.call(operation, () =>
      backend.client.query(backend.collection, {
        query: request.query,
        using: request.using,
        filter,
        limit,
        with_payload: true,
        with_vector: false,
        ...(backend.options.readConsistency !== undefined ? { consistency: backend.options.readConsistency } : {}),
      }),
    );
    return response.points
      .map((point) => ({ memory: fromMemoryPayload(point.payload), score: point.score }))
      .sort(byScoreThenId);
  }

  /**
   * The first `offset + limit` by a timestamp (after the cursor when given), ordered by Qdrant; ties
   * at the page edge are completed and broken by id here. After a cursor, Qdrant reads from past its
   * timestamp (a range on the field ordered by), and the memories at that very timestamp come from a
   * read of their own, kept when their id is past the cursor's: each page costs its own size, not
   * the pages before it.
   */
  private async listOrdered(
    filter: Filter,
    key: Exclude<OrderKey, 'id' | 'stored'>,
    direction: 'asc' | 'desc',
    offset: number,
    limit: number,
    cursor: ListCursor | undefined,
  ): Promise<MemoryRecord[]> {
    const { backend } = this;
    const field = ORDER_FIELDS[key];
    const wanted = offset + limit;
    const cursorMs = cursor ? Date.parse(cursor.value) : undefined;
    const from: Filter =
      cursorMs === undefined ? filter : { must: [filter, { key: field, range: direction === 'asc' ? { gt: cursorMs } : { lt: cursorMs } }] };
    const page = await backend.call('list memories', () =>
      backend.client.scroll(backend.collection, {
        filter: from,
        limit: wanted,
        order_by: { key: field, direction },
        with_payload: true,
        with_vector: false,
        ...(backend.options.readConsistency !== undefined ? { consistency: backend.options.readConsistency } : {}),
      }),
    );
    let records = page.points.map((point: PointRecord) => fromMemoryPayload(point.payload));
    const edge = records[records.length - 1];
    if (records.length >= wanted && edge) {
      const edgeMs = Date.parse(edge[key]);
      const ties = await this.scroll('list memories', { must: [from, { key: field, range: { gte: edgeMs, lte: edgeMs } }] });
      records = [...records.filter((record) => Date.parse(record[key]) !== edgeMs), ...ties];
    }
    if (cursor && cursorMs !== undefined) {
      const atCursor = await this.scroll('list memories', { must: [filter, { key: field, range: { gte: cursorMs, lte: cursorMs } }] });
      records = [...atCursor.filter(pastCursor(cursor, direction)), ...records];
    }
    return records.sort(listOrder(key, direction)).slice(offset, wanted);
  }

  private async scroll(operation: string, filter: Filter): Promise<MemoryRecord[]> {
    const points = await scrollAll(this.backend, operation, filter, true, this.backend.options.readConsistency);
    return points.map((point) => fromMemoryPayload(point.payload));
  }

  private assertOpen(): void {
    if (this.closed) throw new MemloomError({ code: 'CLOSED', backend: this.name, message: 'store is closed' });
  }
}

/** A point id as this store makes them (memoryPointId): a UUID. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

