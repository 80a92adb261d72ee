import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph';
import { CONTROL_OR_BIDI_SOURCE, dataPath, excerpt, jsonDataProblem, MAX_DATA_DEPTH, MemloomError, pairSafeEnd, scoreThenId, validateScope, type Memory, type MemoryCategory, type MemoryFilter, type MemoryRecord, type MemoryVersion, type Scope } from '@memloom/core';
import { unlessGone } from './errors.js';
import {
  indexedOnly,
  isIndexed,
  isItemMetadataKey,
  isUnchangedSinceOwnWrite,
  itemFilter,
  itemMetadata,
  itemsNewestFirst,
  namespaceOf,
  newestCopies,
  newestFirst,
  ownRevisionOf,
  prefixFilter,
  STORE_ITEM_TAG,
  storedValueOf,
  toItem,
  type ItemContent,
  type ItemFilter,
} from './item-records.js';
import { textsAtPath } from './json-path.js';
import { checkKey, checkNamespace, invalid, jsonCopy, matchesCondition, matchesValueFilter } from './langgraph-rules.js';

export { STORE_ITEM_TAG } from './item-records.js';

/** An item found by `search`, with its relevance when a query ranked it (LangGraph's `SearchItem`). */
export type SearchItem = Item & { score?: number };

/**
 * Write order of this process's puts, kept in an item's metadata: items updated in the same
 * millisecond come newest first by it. (Puts of another process in the same millisecond are
 * ordered by their own sequence, then by id: not by write order, but always the same way.)
 */
let lastSequence = 0;

/** Tries of a put that meets another writer's change of the same item (CONFLICT) before it gives up. */
const PUT_ATTEMPTS = 5;

/** Most memories one search ranks: the largest `limit` memloom's search takes. More are ranked that many at a time. */
const MAX_SEARCH = 1000;

/** A memory found by a search, with its score (none for an item put with `index: false`). */
interface RankedEntry {
  record: MemoryRecord;
  score: number | undefined;
}

/** An operation `prepare` checked, with the scope of its namespace. */
type Checked<T> = T & { scope: Scope };
type CheckedSearch = Checked<SearchOperation & { limit: number; offset: number }>;

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
 * `$lte`, `$in`, `$nin` and apply before a query ranks; without a query
 * results come newest first.
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
      const get = { ...operation, scope: this.scopeOf(operation.namespace) };
      return () => this.getItem(get);
    }
    if ('limit' in operation || 'matchConditions' in operation) {
      for (const condition of operation.matchConditions ?? []) checkNamespace(condition.path, { allowEmpty: true, allowReservedRoot: true });
      return () => this.listNamespacesOp(operation);
    }
    throw invalid(`unknown store operation: ${excerpt(JSON.stringify(operation), 80)}`);
  }

  private checkPut(operation: PutOperation): Checked<PutOperation> {
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
    return { ...operation, value, scope: this.scopeOf(operation.namespace) };
  }

  private checkSearch(operation: SearchOperation): CheckedSearch {
    checkNamespace(operation.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = operation.limit ?? 10;
    const offset = operation.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
      throw invalid('search limit and offset must be whole numbers of at least 0');
    }
    const scope = operation.namespacePrefix.length > 0 ? this.scopeOf(operation.namespacePrefix) : {};
    return { ...operation, limit, offset, scope };
  }

  // ---------------------------------------------------------------------------
  // get / put
  // ---------------------------------------------------------------------------

  /** Runs a get `prepare` checked. */
  private async getItem({ namespace, key, scope }: Checked<GetOperation>): Promise<Item | null> {
    const [newest] = await this.copiesOf(namespace, key, scope);
    return newest ? toItem(newest) : null;
  }

  /** Runs a put `checkPut` checked (its value already a JSON copy). */
  private putItem(operation: Checked<PutOperation>): Promise<void> {
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
  private async writeWithRetry(operation: Checked<PutOperation>): Promise<void> {
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
  private async writeItem({ namespace, key, value: stored, index, scope }: Checked<PutOperation>): Promise<void> {
    const [newest, ...olderCopies] = await this.copiesOf(namespace, key, scope);
    for (const copy of olderCopies) await this.release(copy, scope);
    if (stored === null) {
      if (newest) await this.release(newest, scope);
      return;
    }
    // A memory that took in another writer's content is released, and the item gets a memory of its own.
    let current = newest;
    const held = current && (await this.contentOf(current));
    if (current && held === 'other') {
      await this.detach(current, scope);
      current = undefined;
    }
    const text = index === false ? '' : (index ?? this.fields).flatMap((path) => textsAtPath(stored, path)).join('\n');
    const indexed = text.trim() !== '';
    const content = cut(indexed ? text : `${namespace.join('/')}/${key}`, this.memory.config.limits.maxContentLength);
    const metadata = itemMetadata({ namespace, key, value: stored, indexed, sequence: ++lastSequence, ownRevision: ownRevisionOf(current, held) });
    if (current) {
      // Only over the revision read: a change since (a statement merged into it) is a CONFLICT, and the retry looks again.
      await this.memory.update(current.id, { content, metadata }, { scope, refreshTimestamp: true, reason: 'LangGraph store put', expectedRevision: current.revision });
      return;
    }
    await this.memory.add(content, { scope, category: this.category, source: 'system', tags: [STORE_ITEM_TAG], metadata, merge: false });
    // If another store created the item meanwhile, every writer keeps the same newest copy.
    const [, ...copies] = await this.copiesOf(namespace, key, scope);
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
  private async copiesOf(namespace: readonly string[], key: string, scope: Scope): Promise<MemoryRecord[]> {
    const records = await this.memory.list({ scope, filter: itemFilter(namespace, key) });
    return records.sort(newestFirst);
  }

  /** Deletes a memory at the revision read (else CONFLICT, see `writeWithRetry`), unless another store already has. */
  private remove(record: MemoryRecord, scope: Scope): Promise<void> {
    return unlessGone(() => this.memory.delete(record.id, { scope, expectedRevision: record.revision }));
  }

  /**
   * Lets go of a memory that holds an item: deletes it, or, when it took in another writer's
   * content (see `contentOf`), detaches it, so a put or delete of the item never erases what a
   * user said.
   */
  private async release(record: MemoryRecord, scope: Scope): Promise<void> {
    return (await this.contentOf(record)) === 'other' ? this.detach(record, scope) : this.remove(record, scope);
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
   * rewrite it. A memory still at the revision a put gave it holds none (see `ownRevisionOf`);
   * only one changed since has its history read. `system` items are never merge candidates of
   * memloom's own writers, so a `system` store reads no history: it does not know (`unchecked`).
   */
  private async contentOf(record: MemoryRecord): Promise<ItemContent> {
    if (isUnchangedSinceOwnWrite(record)) return 'own';
    if (this.category === 'system') return 'unchecked';
    return (await this.historyHoldsOtherContent(record)) ? 'other' : 'own';
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
  private async searchItems(operation: CheckedSearch): Promise<SearchItem[]> {
    const { namespacePrefix: prefix, limit, offset, scope } = operation;
    if (limit === 0) return [];
    const filter = prefixFilter(prefix);
    const matches = (record: MemoryRecord) => matchesValueFilter(storedValueOf(record), operation.filter);
    const hasValueFilter = operation.filter !== undefined && Object.keys(operation.filter).length > 0;
    const page = (entries: RankedEntry[]) => entries.slice(offset, offset + limit).map((entry) => ({ ...toItem(entry.record), score: entry.score }));
    // Like an item's indexed text, a query longer than the memory's maxContentLength is cut: its start is kept.
    const query = cut(operation.query?.trim() ?? '', this.memory.config.limits.maxContentLength);

    if (query === '') {
      const records = hasValueFilter ? itemsNewestFirst(await this.memory.list({ scope, filter })) : await this.newestItems(scope, filter, offset + limit);
      return page(records.filter(matches).map(unscored));
    }

    const wanted = offset + limit;
    // A page among the best MAX_SEARCH items (those the value filter keeps) is one search.
    const best = await this.bestItems(query, scope, filter, wanted, hasValueFilter ? matches : undefined);
    if (best && best.length >= wanted) return page(best);
    // Else every item of the prefix is read (its newest copy) and, as LangGraph's stores do, filtered before
    // those with text are ranked (unless the search above ranked them all). Items put with `index: false`
    // have no text to rank; like LangGraph's stores, they follow the ranked ones.
    const items = itemsNewestFirst(await this.memory.list({ scope, filter })).filter(matches);
    const ranked = best ?? (await this.rankItems(query, scope, filter, items.filter(isIndexed), wanted, matches));
    const unindexed = items.filter((record) => !isIndexed(record)).map(unscored);
    return page(newestCopies([...ranked, ...unindexed], (entry) => entry.record));
  }

  /**
   * The best `wanted` items of a prefix (each its newest copy, kept when it `matches` a value
   * filter) from one search, all of them when it holds fewer; undefined when a page needs more
   * than one search ranks.
   */
  private async bestItems(query: string, scope: Scope, filter: ItemFilter, wanted: number, matches?: (record: MemoryRecord) => boolean): Promise<RankedEntry[] | undefined> {
    if (wanted > MAX_SEARCH) return undefined;
    // How many items a value filter keeps is unknown: its search reads as many as one search ranks.
    for (let read = matches ? MAX_SEARCH : wanted; ; read = Math.min(MAX_SEARCH, read * 2)) {
      const found = await this.rank(query, scope, indexedOnly(filter), read);
      const newest = newestCopies(found, (entry) => entry.record);
      const items = matches ? newest.filter((entry) => matches(entry.record)) : newest;
      // Older copies of an item take places in the ranking: read on when they leave the page short.
      if (items.length >= wanted || found.length < read) return items;
      if (read === MAX_SEARCH) return undefined;
    }
  }

  /**
   * The best `wanted` of these items, ranked MAX_SEARCH at a time, each search restricted to their
   * memories (`filter.ids`): memloom scores a memory the same whichever others a search is
   * restricted to, so the parts make one ranking, in memloom's order (score, then id). A search
   * returns a memory as it is then: one another writer changed since it was listed is kept only
   * when it still `matches` the value filter.
   */
  private async rankItems(
    query: string,
    scope: Scope,
    filter: ItemFilter,
    records: MemoryRecord[],
    wanted: number,
    matches: (record: MemoryRecord) => boolean,
  ): Promise<RankedEntry[]> {
    const ranked: RankedEntry[] = [];
    for (let start = 0; start < records.length; start += MAX_SEARCH) {
      const ids = records.slice(start, start + MAX_SEARCH).map((record) => record.id);
      // The same filter as a search of the whole prefix (`bestItems`), so keyword scores are normalised alike.
      const found = await this.rank(query, scope, { ...indexedOnly(filter), ids }, Math.min(ids.length, wanted));
      ranked.push(...found.filter((entry) => matches(entry.record)));
    }
    return ranked.sort((a, b) => scoreThenId(a.score ?? 0, a.record.id, b.score ?? 0, b.record.id)).slice(0, wanted);
  }

  /**
   * One memloom search. minScore 0: like LangGraph's stores, a query ranks every matching item and
   * drops none (the memory's `retrieval.minScore` is for what goes into a prompt).
   */
  private async rank(query: string, scope: Scope, filter: MemoryFilter, limit: number): Promise<RankedEntry[]> {
    const results = await this.memory.search(query, { scope, limit, minScore: 0, filter });
    return results.map((result) => ({ record: result.memory, score: result.score }));
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

  /** The scope of a namespace; memloom refuses some labels LangGraph takes (blank, too long, control or bidi characters). */
  private scopeOf(namespace: readonly string[]): Scope {
    const scope = this.scopeFromNamespace(namespace) ?? {};
    const maxLength = this.memory.config.limits.maxScopeLength;
    try {
      return validateScope(scope, maxLength, 'langgraph-store');
    } catch (error) {
      if (!MemloomError.hasCode(error, 'INVALID_SCOPE')) throw error;
      const field = typeof error.details.field === 'string' ? error.details.field : undefined;
      const given = field === undefined ? '' : ` scope.${field} = ${excerpt(quoted((scope as Record<string, unknown>)[field]), 80)}`;
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend: 'langgraph-store',
        message:
          `namespace ${excerpt(quoted(namespace), 80)} maps to${given || ' a scope'} that memloom refuses: ${error.reason}. ` +
          `A namespace label that becomes a scope value must be non-blank, at most ${maxLength} characters long and without control or bidi control characters.`,
        details: { ...error.details, namespace: [...namespace] },
        cause: error,
      });
    }
  }
}

/** An item without a score: listed, not ranked. */
function unscored(record: MemoryRecord): RankedEntry {
  return { record, score: undefined };
}

/** The start of a text, at most `maxLength` characters, never ending on half an emoji. */
function cut(text: string, maxLength: number): string {
  return text.slice(0, pairSafeEnd(text, maxLength));
}

/** Core's control and bidi characters (JSON escapes only C0 ones). */
const CONTROL_OR_BIDI = new RegExp(CONTROL_OR_BIDI_SOURCE, 'gu');

/** A value as JSON, with every control or bidi character escaped (`\u202e`), so a message never holds one. */
function quoted(value: unknown): string {
  return JSON.stringify(value).replace(CONTROL_OR_BIDI, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

