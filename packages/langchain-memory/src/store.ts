import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph';
import { dataPath, jsonDataProblem, MAX_DATA_DEPTH, MemloomError, validateScope, type Memory, type MemoryCategory, type MemoryFilter, type MemoryRecord, type MemoryVersion, type Scope } from '@memloom/core';
import { unlessGone } from './errors.js';
import { textsAtPath } from './json-path.js';

/** An item found by `search`, with its relevance when a query ranked it (LangGraph's `SearchItem`). */
export type SearchItem = Item & { score?: number };

/** Tag on every memory that holds a LangGraph store item. */
export const STORE_ITEM_TAG = 'langgraph-item';

/** Metadata keys of an item's memory. `lgNs_0`, `lgNs_1`, … hold the labels so a namespace prefix is an equality filter. */
const META = {
  namespace: 'lgNamespace',
  label: 'lgNs_',
  depth: 'lgDepth',
  key: 'lgKey',
  value: 'lgValue',
  indexed: 'lgIndexed',
  sequence: 'lgSeq',
  ownRevision: 'lgRevision',
} as const;

/**
 * Write order of this process's puts, kept in an item's metadata: items updated in the same
 * millisecond come newest first by it. (Puts of another process in the same millisecond are
 * ordered by their own sequence, then by id: not by write order, but always the same way.)
 */
let lastSequence = 0;

/** Tries of a put that meets another writer's change of the same item (CONFLICT) before it gives up. */
const PUT_ATTEMPTS = 5;

/** Most items one query ranks: the largest `limit` memloom's search takes. */
const MAX_SEARCH = 1000;

/** A memory found by a search, with its score (none for an item put with `index: false`). */
interface RankedEntry {
  record: MemoryRecord;
  score: number | undefined;
}

export interface MemloomStoreOptions {
  /**
   * The memloom scope of a namespace. Also called with search and listing prefixes, so it must
   * leave a field undefined when the prefix does not reach it.
   * @default (namespace) => ({ userId: namespace[0] }), for namespaces like ["alice", "memories"]
   */
  scopeFromNamespace?: (namespace: readonly string[]) => Scope;
  /** Fields of a value whose text is embedded and searched (LangGraph's `index.fields`); a put's own `index` wins. @default ["$"] (the whole value as JSON) */
  fields?: string[];
  /**
   * Category of the memories that hold items. `system` is never decayed, compressed or merged,
   * and the agent middleware does not inject it, so items stay exactly as put.
   * @default 'system'
   */
  category?: MemoryCategory;
}

/**
 * A LangGraph `BaseStore` backed by memloom, for `createAgent({ store })` and
 * LangGraph graphs. Each item is one memory: the value lives in the memory's
 * metadata, the text of its indexed fields is the memory's content, so
 * `search` with a `query` is memloom's hybrid retrieval (semantic + keyword),
 * its scores memloom's combined 0..1 score. The namespace maps to a scope
 * (`scopeFromNamespace`) and is kept whole in the metadata, so items of one
 * namespace never leak into another.
 *
 * Semantics follow LangGraph's stores: `put` replaces the value (keeping
 * `createdAt`, moving `updatedAt`), a `null` value deletes, `get` of a missing
 * key is `null`, `search` defaults to `limit` 10 and `offset` 0, filters match
 * top-level value fields exactly or with `$eq`, `$ne`, `$gt`, `$gte`, `$lt`,
 * `$lte`, `$in`, `$nin`; without a query results come newest first.
 * Operations of a batch run in order. Namespaces follow LangGraph's rules, but
 * a refused namespace, like any other bad input, is a `MemloomError`.
 */
export class MemloomStore extends BaseStore {
  readonly memory: Memory;
  private readonly scopeFromNamespace: (namespace: readonly string[]) => Scope;
  private readonly fields: string[];
  private readonly category: MemoryCategory;
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(memory: Memory, options: MemloomStoreOptions = {}) {
    super();
    if (!memory || typeof memory.list !== 'function') {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'langgraph-store', message: 'MemloomStore needs a Memory (from createMemory)' });
    }
    this.memory = memory;
    this.scopeFromNamespace = options.scopeFromNamespace ?? ((namespace) => ({ userId: namespace[0] }));
    this.fields = options.fields ?? ['$'];
    this.category = options.category ?? 'system';
  }

  // LangGraph's BaseStore checks a namespace before `batch` and throws its own InvalidNamespaceError.
  // These check LangGraph's rules first, so a refused namespace is a MemloomError (INVALID_INPUT).

  override async get(namespace: string[], key: string): Promise<Item | null> {
    checkNamespace(namespace, { allowEmpty: false, allowReservedRoot: true });
    return super.get(namespace, key);
  }

  override async put(namespace: string[], key: string, value: Record<string, unknown>, index?: false | string[]): Promise<void> {
    checkNamespace(namespace, { allowEmpty: false, allowReservedRoot: false });
    return super.put(namespace, key, value, index);
  }

  override async delete(namespace: string[], key: string): Promise<void> {
    checkNamespace(namespace, { allowEmpty: false, allowReservedRoot: true });
    return super.delete(namespace, key);
  }

  override async search(namespacePrefix: string[], options?: Parameters<BaseStore['search']>[1]): Promise<SearchItem[]> {
    checkNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    return super.search(namespacePrefix, options);
  }

  override async listNamespaces(options: Parameters<BaseStore['listNamespaces']>[0] = {}): Promise<string[][]> {
    if (options.prefix) checkNamespace(options.prefix, { allowEmpty: true, allowReservedRoot: true });
    if (options.suffix) checkNamespace(options.suffix, { allowEmpty: true, allowReservedRoot: true });
    return super.listNamespaces(options);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // Like LangGraph's stores, a batch checks every operation before it runs any, so a refused one
    // writes nothing: inside an agent run LangGraph sends concurrent calls as one batch.
    const runs = operations.map((operation) => this.prepare(operation));
    const results: unknown[] = [];
    for (const run of runs) results.push(await run());
    return results as OperationResults<Op>;
  }

  /** Checks an operation (namespace, key, value, scope, paging) and returns the work that runs it. */
  private prepare(operation: Operation): () => Promise<unknown> {
    if ('namespacePrefix' in operation) {
      const search = this.checkSearch(operation);
      return () => this.searchItems(search);
    }
    if ('value' in operation) {
      const put = this.checkPut(operation);
      return () => this.putItem(put);
    }
    if ('key' in operation && 'namespace' in operation) {
      checkNamespace(operation.namespace, { allowEmpty: false, allowReservedRoot: true });
      checkKey(operation.key);
      this.scopeOf(operation.namespace);
      return () => this.getItem(operation);
    }
    if ('limit' in operation || 'matchConditions' in operation) {
      for (const condition of operation.matchConditions ?? []) checkNamespace(condition.path, { allowEmpty: true, allowReservedRoot: true });
      return () => this.listNamespacesOp(operation);
    }
    throw invalid(`unknown store operation: ${shorten(JSON.stringify(operation))}`);
  }

  private checkPut(operation: PutOperation): PutOperation {
    // Through `batch`, like LangGraph's InMemoryStore, a put may use the root "langgraph" (`put` refuses it).
    checkNamespace(operation.namespace, { allowEmpty: false, allowReservedRoot: true });
    checkKey(operation.key);
    const value = operation.value === null ? null : jsonCopy(operation.value);
    // The value is kept one level down in the memory's metadata (`lgValue`), which memloom lets nest MAX_DATA_DEPTH levels.
    const problem = value === null ? undefined : jsonDataProblem(value, { maxDepth: MAX_DATA_DEPTH - 1 });
    if (problem) throw invalid(`an item value: ${dataPath('value', problem.path)} ${problem.problem}`);
    const { index } = operation;
    if (index !== undefined && index !== false && !(Array.isArray(index) && index.every((path) => typeof path === 'string'))) {
      throw invalid('an item index must be false or a list of field paths (strings)');
    }
    this.scopeOf(operation.namespace);
    return { ...operation, value };
  }

  private checkSearch(operation: SearchOperation): SearchOperation & { limit: number; offset: number } {
    checkNamespace(operation.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = operation.limit ?? 10;
    const offset = operation.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
      throw invalid('search limit and offset must be whole numbers of at least 0');
    }
    if (operation.namespacePrefix.length > 0) this.scopeOf(operation.namespacePrefix);
    return { ...operation, limit, offset };
  }

  // ---------------------------------------------------------------------------
  // get / put
  // ---------------------------------------------------------------------------

  /** Runs a get `prepare` checked. */
  private async getItem(operation: GetOperation): Promise<Item | null> {
    const [newest] = await this.copiesOf(operation.namespace, operation.key);
    return newest ? toItem(newest) : null;
  }

  /** Runs a put `checkPut` checked (its value already a JSON copy). */
  private putItem(operation: PutOperation): Promise<void> {
    // Puts of one item through this store are serialized; other stores are handled in writeItem.
    const lockKey = JSON.stringify([operation.namespace, operation.key]);
    const previous = this.locks.get(lockKey) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.writeWithRetry(operation));
    this.locks.set(lockKey, next);
    return next.finally(() => {
      if (this.locks.get(lockKey) === next) this.locks.delete(lockKey);
    });
  }

  /**
   * A put is last-writer-wins, as in LangGraph's stores: when another store (or process) changed
   * the item between this write's read and its update or delete (CONFLICT), it is read and written
   * again. The new read sees any merge that landed meanwhile (the memory is past its `lgRevision`
   * mark, so its history is read), and the merged content is released, never overwritten.
   */
  private async writeWithRetry(operation: PutOperation): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writeItem(operation);
      } catch (error) {
        if (!MemloomError.hasCode(error, 'CONFLICT') || attempt === PUT_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Another store over the same memories (or another process on the same file) can create an item
   * at the same time as this one, so an item may have several copies: the newest is the item, and
   * each write leaves only one.
   */
  private async writeItem({ namespace, key, value: stored, index }: PutOperation): Promise<void> {
    const scope = this.scopeOf(namespace);
    const [newest, ...olderCopies] = await this.copiesOf(namespace, key);
    for (const copy of olderCopies) await this.release(copy, scope);
    if (stored === null) {
      if (newest) await this.release(newest, scope);
      return;
    }
    // A memory that took in another writer's content is released, and the item gets a memory of its own.
    let current = newest;
    // Whether the memory is known to hold only the item's own writes (see `ownRevisionOf`).
    let ownOnly = current !== undefined && isUnchangedSinceOwnWrite(current);
    if (current && !ownOnly && this.category !== 'system') {
      if (await this.historyHoldsOtherContent(current)) {
        await this.detach(current, scope);
        current = undefined;
      } else {
        ownOnly = true;
      }
    }
    const text = index === false ? '' : (index ?? this.fields).flatMap((path) => textsAtPath(stored, path)).join('\n');
    const indexed = text.trim() !== '';
    const limit = this.memory.config.limits.maxContentLength;
    const content = indexed ? text.slice(0, limit) : `${namespace.join('/')}/${key}`.slice(0, limit);
    const metadata: Record<string, unknown> = {
      [META.namespace]: JSON.stringify(namespace),
      [META.depth]: namespace.length,
      ...Object.fromEntries(namespace.map((label, position) => [`${META.label}${position}`, label])),
      [META.key]: key,
      [META.value]: stored,
      [META.indexed]: indexed,
      [META.sequence]: ++lastSequence,
    };
    const ownRevision = ownRevisionOf(current, ownOnly);
    if (ownRevision !== undefined) metadata[META.ownRevision] = ownRevision;
    if (current) {
      // Only over the revision read: a change since (a statement merged into it) is a CONFLICT, and the retry looks again.
      await this.memory.update(current.id, { content, metadata }, { scope, refreshTimestamp: true, reason: 'LangGraph store put', expectedRevision: current.revision });
      return;
    }
    await this.memory.add(content, { scope, category: this.category, source: 'system', tags: [STORE_ITEM_TAG], metadata, merge: false });
    // If another store created the item meanwhile, every writer keeps the same newest copy.
    const [, ...copies] = await this.copiesOf(namespace, key);
    for (const copy of copies) await this.remove(copy, scope);
  }

  /**
   * The newest items of a prefix (each its newest copy, see `writeItem`), enough for its first
   * `count` in `newestFirst` order: the store orders by `updatedAt` only, so a read must go past
   * the last item wanted until the `updatedAt` changes (items written in one millisecond are
   * ordered here, by write sequence), and past any older copies of an item. Reads double until
   * that holds.
   */
  private async newestItems(scope: Scope, filter: MemoryFilter, count: number): Promise<MemoryRecord[]> {
    for (let read = count + 16; ; read *= 2) {
      const records = await this.memory.list({ scope, filter, orderBy: 'updatedAt', direction: 'desc', limit: read });
      const lastRead = records[records.length - 1];
      const items = itemsNewestFirst(records);
      if (records.length < read) return items;
      const lastWanted = items[count - 1];
      // Every record not read is at most as new as the last one read: enough once that is older than the last item wanted.
      if (count === 0 || (lastWanted && lastRead && lastWanted.updatedAt > lastRead.updatedAt)) return items;
    }
  }

  /** Every memory holding the item, newest first. */
  private async copiesOf(namespace: readonly string[], key: string): Promise<MemoryRecord[]> {
    const records = await this.memory.list({
      scope: this.scopeOf(namespace),
      filter: { tags: [STORE_ITEM_TAG], metadata: { [META.namespace]: JSON.stringify(namespace), [META.key]: key } },
    });
    return records.sort(newestFirst);
  }

  /** Deletes a memory at the revision read (else CONFLICT, see `writeWithRetry`), unless another store already has. */
  private remove(record: MemoryRecord, scope: Scope): Promise<void> {
    return unlessGone(() => this.memory.delete(record.id, { scope, expectedRevision: record.revision }));
  }

  /**
   * Lets go of a memory that holds an item: deletes it, or, when it took in another writer's
   * content (see `holdsOtherContent`), detaches it, so a put or delete of the item never erases
   * what a user said.
   */
  private async release(record: MemoryRecord, scope: Scope): Promise<void> {
    return (await this.holdsOtherContent(record)) ? this.detach(record, scope) : this.remove(record, scope);
  }

  /** Keeps a memory that took in another writer's content as a plain memory, without the item's tag and metadata. */
  private detach(record: MemoryRecord, scope: Scope): Promise<void> {
    const metadata = Object.fromEntries(Object.entries(record.metadata).filter(([key]) => !isItemMetadataKey(key)));
    const tags = record.tags.filter((tag) => tag !== STORE_ITEM_TAG);
    return unlessGone(() => this.memory.update(record.id, { tags, metadata }, { scope, reason: 'LangGraph store item released: it holds merged content' }));
  }

  /**
   * Whether another writer's content went into an item's memory. Items are added unmerged, but
   * with a category that merges (`fact`, `core`, `episode`) core may pick one as the nearest
   * memory of a later add (a user's statement) and merge into it, or a model's UPDATE may
   * rewrite it. `system` items are never merge candidates of memloom's own writers.
   * A memory still at the revision a put gave it holds none (see `ownRevisionOf`); only one
   * changed since has its history read.
   */
  private async holdsOtherContent(record: MemoryRecord): Promise<boolean> {
    if (this.category === 'system' || isUnchangedSinceOwnWrite(record)) return false;
    return this.historyHoldsOtherContent(record);
  }

  /** Whether a merge or a model's UPDATE is in the memory's history: reads all of it. */
  private async historyHoldsOtherContent(record: MemoryRecord): Promise<boolean> {
    let versions: MemoryVersion[];
    try {
      versions = await this.memory.history(record.id, { scope: record.scope });
    } catch (error) {
      if (MemloomError.hasCode(error, 'NOT_FOUND')) return false; // another store deleted it meanwhile
      throw error;
    }
    return versions.some((version) => version.action === 'merge' || (version.action === 'edit' && version.trigger === 'extraction'));
  }

  // ---------------------------------------------------------------------------
  // search
  // ---------------------------------------------------------------------------

  /** Runs a search `checkSearch` checked. */
  private async searchItems(operation: SearchOperation & { limit: number; offset: number }): Promise<SearchItem[]> {
    const { namespacePrefix: prefix, limit, offset } = operation;
    if (limit === 0) return [];
    const scope = prefix.length > 0 ? this.scopeOf(prefix) : {};
    const filter = prefixFilter(prefix);
    const matches = (record: MemoryRecord) => matchesValueFilter(record.metadata[META.value], operation.filter);
    const hasValueFilter = operation.filter !== undefined && Object.keys(operation.filter).length > 0;
    // Like an item's indexed text, a query longer than the memory's maxContentLength is cut: its start is kept.
    const query = (operation.query?.trim() ?? '').slice(0, this.memory.config.limits.maxContentLength);

    if (query === '') {
      const items = hasValueFilter ? itemsNewestFirst(await this.memory.list({ scope, filter })) : await this.newestItems(scope, filter, offset + limit);
      return items
        .filter(matches)
        .slice(offset, offset + limit)
        .map((record) => ({ ...toItem(record), score: undefined }));
    }

    const wanted = offset + limit;
    const indexed = { ...filter, metadata: { ...filter.metadata, [META.indexed]: true } };
    // One entry per item (its newest copy) that passes the value filter, in order.
    const itemsOf = (entries: RankedEntry[]) => newestCopies(entries, (entry) => entry.record).filter((entry) => matches(entry.record));
    // The value filter applies after ranking, so with one the search ranks all it can at once.
    let read = hasValueFilter ? MAX_SEARCH : Math.min(MAX_SEARCH, wanted);
    let found: RankedEntry[];
    for (;;) {
      // minScore 0: like LangGraph's stores, a query ranks every matching item and drops none (the memory's
      // `retrieval.minScore` is for what goes into a prompt).
      const results = await this.memory.search(query, { scope, limit: read, minScore: 0, filter: indexed });
      found = results.map((result) => ({ record: result.memory, score: result.score }));
      // Older copies of an item take places in the ranking: read on when they leave the page short.
      if (results.length < read || read === MAX_SEARCH || itemsOf(found).length >= wanted) break;
      read = Math.min(MAX_SEARCH, read * 2);
    }
    let items = itemsOf(found);
    if (items.length < wanted) {
      // A full answer may have left items unranked (memloom's search returns at most MAX_SEARCH): they
      // rank below the ones returned, in an order memloom does not give, so a page that reaches them is refused.
      if (found.length === read) {
        const ranked = new Set(items.map((entry) => itemIdOf(entry.record)));
        const unranked = itemsNewestFirst(await this.memory.list({ scope, filter: indexed })).filter((record) => matches(record) && !ranked.has(itemIdOf(record)));
        if (unranked.length > 0 && offset < items.length + unranked.length) {
          throw beyondRankingLimit({ prefix, offset, limit, ranked: items.length, unranked: unranked.length, hasValueFilter });
        }
        // The page starts after them: they only hold their places.
        found.push(...unranked.map((record) => ({ record, score: undefined })));
      }
      // Items put with `index: false` have no text to rank; like LangGraph's stores, they come after the ranked ones.
      const unindexed = await this.memory.list({ scope, filter: { ...filter, metadata: { ...filter.metadata, [META.indexed]: false } } });
      found.push(...unindexed.sort(newestFirst).map((record) => ({ record, score: undefined })));
      items = itemsOf(found);
    }
    return items
      .slice(offset, offset + limit)
      .map((entry) => ({ ...toItem(entry.record), score: entry.score }));
  }

  // ---------------------------------------------------------------------------
  // listNamespaces
  // ---------------------------------------------------------------------------

  private async listNamespacesOp(operation: ListNamespacesOperation): Promise<string[][]> {
    const conditions = operation.matchConditions ?? [];
    // A prefix without wildcards narrows the read to its scope and labels.
    const plain = conditions.find((condition) => condition.matchType === 'prefix' && condition.path.length > 0 && !condition.path.includes('*'));
    const records = await this.memory.list({
      scope: plain ? this.scopeOf(plain.path) : {},
      filter: plain ? prefixFilter(plain.path) : { tags: [STORE_ITEM_TAG] },
    });
    const seen = new Set<string>();
    let namespaces: string[][] = [];
    for (const record of records) {
      const namespace = namespaceOf(record);
      if (!namespace || !conditions.every((condition) => matchesCondition(condition, namespace))) continue;
      const shown = operation.maxDepth === undefined ? namespace : namespace.slice(0, operation.maxDepth);
      const id = JSON.stringify(shown);
      if (seen.has(id)) continue;
      seen.add(id);
      namespaces.push(shown);
    }
    namespaces = namespaces.sort((a, b) => a.join(':').localeCompare(b.join(':')));
    const offset = operation.offset ?? 0;
    return namespaces.slice(offset, offset + (operation.limit ?? namespaces.length));
  }

  /** The scope of a namespace; memloom refuses some labels LangGraph takes (blank, too long, control characters). */
  private scopeOf(namespace: readonly string[]): Scope {
    const scope = this.scopeFromNamespace(namespace) ?? {};
    const maxLength = this.memory.config.limits.maxScopeLength;
    try {
      return validateScope(scope, maxLength, 'langgraph-store');
    } catch (error) {
      if (!MemloomError.hasCode(error, 'INVALID_SCOPE')) throw error;
      const field = typeof error.details.field === 'string' ? error.details.field : undefined;
      const given = field === undefined ? '' : ` scope.${field} = ${shorten(JSON.stringify((scope as Record<string, unknown>)[field]))}`;
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend: 'langgraph-store',
        message:
          `namespace ${shorten(JSON.stringify(namespace))} maps to${given || ' a scope'} that memloom refuses: ${error.reason}. ` +
          `A namespace label that becomes a scope value must be non-blank, at most ${maxLength} characters long and without control characters.`,
        details: { ...error.details, namespace: [...namespace] },
        cause: error,
      });
    }
  }
}

function prefixFilter(prefix: readonly string[]): MemoryFilter & { metadata: Record<string, string | number | boolean> } {
  return {
    tags: [STORE_ITEM_TAG],
    metadata: Object.fromEntries(prefix.map((label, position) => [`${META.label}${position}`, label])),
  };
}

/** Newest first: by updatedAt, then by write sequence (puts in the same millisecond), then by id. */
function newestFirst(a: MemoryRecord, b: MemoryRecord): number {
  return descending(a.updatedAt, b.updatedAt) || sequenceOf(b) - sequenceOf(a) || descending(a.id, b.id);
}

function descending(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

/** The metadata keys the store writes on an item's memory. */
function isItemMetadataKey(key: string): boolean {
  return key.startsWith(META.label) || Object.values(META).some((name) => name === key);
}

/**
 * The revision a put's write gives the item's memory, kept in its metadata (`lgRevision`) when the
 * memory is known to hold only the item's own writes: it is new (revision 1), or it was checked
 * (`ownOnly`: it was still at the revision of the last such write, or its history holds no merge
 * and no model's UPDATE). Any later change (a merge, a model's UPDATE, `memory.update`, decay,
 * another store's put that could not tell) moves the revision past the mark, and the next put
 * reads the history again, as it does for memories written before the mark existed. So a put
 * reads no history while the store is the memory's only writer, however long its history.
 * The write itself bumps the revision by one (`Memory.update`), and only from the revision read:
 * a change that lands first is a CONFLICT and the put looks again; one that lands after leaves
 * the memory past the mark.
 */
function ownRevisionOf(current: MemoryRecord | undefined, ownOnly: boolean): number | undefined {
  if (!current) return 1;
  return ownOnly ? current.revision + 1 : undefined;
}

/** Whether nothing changed the memory since a put marked it (see `ownRevisionOf`). */
function isUnchangedSinceOwnWrite(record: MemoryRecord): boolean {
  return record.metadata[META.ownRevision] === record.revision;
}

function sequenceOf(record: MemoryRecord): number {
  const sequence = record.metadata[META.sequence];
  return typeof sequence === 'number' ? sequence : 0;
}

/** Records as items: newest first, each item once (its newest copy). */
function itemsNewestFirst(records: MemoryRecord[]): MemoryRecord[] {
  return newestCopies(records.sort(newestFirst), (record) => record);
}

/** The entries whose memory is the newest copy of its item (see `writeItem`), in their order. */
function newestCopies<T>(entries: T[], recordOf: (entry: T) => MemoryRecord): T[] {
  const newest = new Map<string, MemoryRecord>();
  for (const entry of entries) {
    const record = recordOf(entry);
    const item = itemIdOf(record);
    const known = newest.get(item);
    if (!known || newestFirst(record, known) < 0) newest.set(item, record);
  }
  return entries.filter((entry) => newest.get(itemIdOf(recordOf(entry))) === recordOf(entry));
}

function itemIdOf(record: MemoryRecord): string {
  return JSON.stringify([record.metadata[META.namespace], record.metadata[META.key]]);
}

function toItem(record: MemoryRecord): Item {
  const namespace = namespaceOf(record) ?? [];
  const value = record.metadata[META.value];
  return {
    namespace,
    key: String(record.metadata[META.key]),
    value: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {},
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

function namespaceOf(record: MemoryRecord): string[] | undefined {
  const raw = record.metadata[META.namespace];
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) && parsed.every((label) => typeof label === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function matchesCondition(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const start = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, position) => label === '*' || namespace[start + position] === label);
}

/** LangGraph's filter: top-level value fields, equal, or compared with $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin. */
function matchesValueFilter(value: unknown, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  return Object.entries(filter).every(([field, wanted]) => compare(fields[field], wanted));
}

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

function compare(actual: unknown, wanted: unknown): boolean {
  const isOperators =
    typeof wanted === 'object' && wanted !== null && !Array.isArray(wanted) && Object.keys(wanted).length > 0 && Object.keys(wanted).every((key) => OPERATORS.has(key));
  if (!isOperators) return deepEqual(actual, wanted);
  return Object.entries(wanted as Record<string, unknown>).every(([operator, operand]) => {
    switch (operator) {
      case '$eq':
        return deepEqual(actual, operand);
      case '$ne':
        return !deepEqual(actual, operand);
      case '$gt':
        return Number(actual) > Number(operand);
      case '$gte':
        return Number(actual) >= Number(operand);
      case '$lt':
        return Number(actual) < Number(operand);
      case '$lte':
        return Number(actual) <= Number(operand);
      case '$in':
        return Array.isArray(operand) && operand.some((entry) => deepEqual(actual, entry));
      case '$nin':
        return !Array.isArray(operand) || !operand.some((entry) => deepEqual(actual, entry));
      default:
        return false;
    }
  });
}

function deepEqual(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * LangGraph's namespace rules (`validateNamespace`): labels are non-empty strings without ".",
 * ":" or NUL; only search and listing take an empty namespace; only `put` refuses the root "langgraph".
 */
function checkNamespace(namespace: readonly string[], rules: { allowEmpty: boolean; allowReservedRoot: boolean }): void {
  if (!Array.isArray(namespace)) throw invalid(`a namespace must be an array of strings, got ${typeof namespace}`);
  if (namespace.length === 0 && !rules.allowEmpty) throw invalid('a namespace cannot be empty');
  const shown = shorten(JSON.stringify(namespace));
  for (const label of namespace as unknown[]) {
    if (typeof label !== 'string') throw invalid(`namespace ${shown}: labels must be strings, got ${typeof label}`);
    if (label === '') throw invalid(`namespace ${shown}: labels cannot be empty strings`);
    if (label.includes('.')) throw invalid(`namespace ${shown}: label ${shorten(JSON.stringify(label))} holds a period ("."), which LangGraph does not allow`);
    if (label.includes(':')) throw invalid(`namespace ${shown}: label ${shorten(JSON.stringify(label))} holds a colon (":"), which LangGraph does not allow`);
    if (label.includes('\0')) throw invalid(`namespace ${shown}: label ${shorten(JSON.stringify(label))} holds a NUL character, which LangGraph does not allow`);
  }
  if (namespace[0] === 'langgraph' && !rules.allowReservedRoot) throw invalid(`namespace ${shown}: the root label "langgraph" is reserved by LangGraph`);
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string') throw invalid(`an item key must be a string, got ${typeof key}`);
}

/** A value as stored: a JSON copy, so it must be a JSON object. */
function jsonCopy(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('an item value must be an object (or null to delete the item)');
  }
  let copy: unknown;
  try {
    const text = JSON.stringify(value);
    copy = text === undefined ? undefined : JSON.parse(text);
  } catch (error) {
    throw invalid(`an item value must be storable as JSON: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw invalid('an item value must be storable as a JSON object (its toJSON gives something else)');
  }
  return copy as Record<string, unknown>;
}

/** A query's page that reaches past the items memloom's search can rank (see `MAX_SEARCH`). */
function beyondRankingLimit(page: { prefix: readonly string[]; offset: number; limit: number; ranked: number; unranked: number; hasValueFilter: boolean }): MemloomError {
  const passing = page.hasValueFilter ? ' that pass the filter' : '';
  return new MemloomError({
    code: 'NOT_SUPPORTED',
    backend: 'langgraph-store',
    message:
      `search with a query ranks at most the ${MAX_SEARCH} best items of a prefix (the most memloom's search returns) and this page needs more: ` +
      `under ${shorten(JSON.stringify(page.prefix))}, offset ${page.offset} + limit ${page.limit} reaches past the ${page.ranked} ranked items${passing}, ` +
      `and ${page.unranked} more${page.hasValueFilter ? ' that pass it' : ''} rank lower, in an order memloom does not give. ` +
      `Narrow the namespace prefix${page.hasValueFilter ? ' or the filter' : ''}, or search without a query (newest first).`,
    details: { prefix: [...page.prefix], offset: page.offset, limit: page.limit, maxRanked: MAX_SEARCH, ranked: page.ranked, unranked: page.unranked },
  });
}

function shorten(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function invalid(message: string, cause?: unknown): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'langgraph-store', message, ...(cause === undefined ? {} : { cause }) });
}
