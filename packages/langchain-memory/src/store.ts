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
import { MemloomError, validateScope, type Memory, type MemoryCategory, type MemoryFilter, type MemoryRecord, type Scope } from '@memloom/core';
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
} as const;

/** Largest page one query reads from memloom's search. */
const MAX_SEARCH = 1000;

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
 * Operations of a batch run in order.
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

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const operation of operations) results.push(await this.run(operation));
    return results as OperationResults<Op>;
  }

  private run(operation: Operation): Promise<unknown> {
    if ('namespacePrefix' in operation) return this.searchItems(operation);
    if ('value' in operation) return this.putItem(operation);
    if ('key' in operation && 'namespace' in operation) return this.getItem(operation);
    if ('limit' in operation || 'matchConditions' in operation) return this.listNamespacesOp(operation);
    throw invalid(`unknown store operation: ${JSON.stringify(operation)}`);
  }

  // ---------------------------------------------------------------------------
  // get / put
  // ---------------------------------------------------------------------------

  private async getItem(operation: GetOperation): Promise<Item | null> {
    checkNamespace(operation.namespace, false);
    const record = await this.find(operation.namespace, operation.key);
    return record ? toItem(record) : null;
  }

  private putItem(operation: PutOperation): Promise<void> {
    checkNamespace(operation.namespace, false);
    if (typeof operation.key !== 'string') throw invalid('an item key must be a string');
    const { value } = operation;
    if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
      throw invalid('an item value must be an object (or null to delete the item)');
    }
    // Puts of one item are serialized, so two concurrent first puts cannot create it twice.
    const lockKey = JSON.stringify([operation.namespace, operation.key]);
    const previous = this.locks.get(lockKey) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.writeItem(operation));
    this.locks.set(lockKey, next);
    return next.finally(() => {
      if (this.locks.get(lockKey) === next) this.locks.delete(lockKey);
    });
  }

  private async writeItem({ namespace, key, value, index }: PutOperation): Promise<void> {
    const scope = this.scopeOf(namespace);
    const current = await this.find(namespace, key);
    if (value === null) {
      if (current) await this.memory.delete(current.id, { scope });
      return;
    }
    const stored = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
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
    };
    if (current) {
      await this.memory.update(current.id, { content, metadata }, { scope, refreshTimestamp: true, reason: 'LangGraph store put' });
      return;
    }
    await this.memory.add(content, { scope, category: this.category, source: 'system', tags: [STORE_ITEM_TAG], metadata, merge: false });
  }

  private async find(namespace: readonly string[], key: string): Promise<MemoryRecord | undefined> {
    const [record] = await this.memory.list({
      scope: this.scopeOf(namespace),
      filter: { tags: [STORE_ITEM_TAG], metadata: { [META.namespace]: JSON.stringify(namespace), [META.key]: key } },
      orderBy: 'updatedAt',
      direction: 'desc',
      limit: 1,
    });
    return record;
  }

  // ---------------------------------------------------------------------------
  // search
  // ---------------------------------------------------------------------------

  private async searchItems(operation: SearchOperation): Promise<SearchItem[]> {
    const prefix = operation.namespacePrefix;
    checkNamespace(prefix, true);
    const limit = operation.limit ?? 10;
    const offset = operation.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
      throw invalid('search limit and offset must be whole numbers of at least 0');
    }
    if (limit === 0) return [];
    const scope = prefix.length > 0 ? this.scopeOf(prefix) : {};
    const filter = prefixFilter(prefix);
    const matches = (record: MemoryRecord) => matchesValueFilter(record.metadata[META.value], operation.filter);
    const hasValueFilter = operation.filter !== undefined && Object.keys(operation.filter).length > 0;
    const query = operation.query?.trim() ?? '';

    if (query === '') {
      const records = await this.memory.list({
        scope,
        filter,
        orderBy: 'updatedAt',
        direction: 'desc',
        ...(hasValueFilter ? {} : { limit, offset }),
      });
      const page = hasValueFilter ? records.filter(matches).slice(offset, offset + limit) : records;
      return page.map((record) => ({ ...toItem(record), score: undefined }));
    }

    const wanted = hasValueFilter ? MAX_SEARCH : Math.min(MAX_SEARCH, offset + limit);
    const results = await this.memory.search(query, {
      scope,
      limit: wanted,
      filter: { ...filter, metadata: { ...filter.metadata, [META.indexed]: true } },
    });
    const ranked: SearchItem[] = results.filter((result) => matches(result.memory)).map((result) => ({ ...toItem(result.memory), score: result.score }));
    if (ranked.length < offset + limit) {
      // Items put with `index: false` have no text to rank; like LangGraph's stores, they come after the ranked ones.
      const unindexed = await this.memory.list({
        scope,
        filter: { ...filter, metadata: { ...filter.metadata, [META.indexed]: false } },
        orderBy: 'updatedAt',
        direction: 'desc',
      });
      ranked.push(...unindexed.filter(matches).map((record) => ({ ...toItem(record), score: undefined })));
    }
    return ranked.slice(offset, offset + limit);
  }

  // ---------------------------------------------------------------------------
  // listNamespaces
  // ---------------------------------------------------------------------------

  private async listNamespacesOp(operation: ListNamespacesOperation): Promise<string[][]> {
    const conditions = operation.matchConditions ?? [];
    for (const condition of conditions) checkNamespace(condition.path.filter((label) => label !== '*'), true);
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

  private scopeOf(namespace: readonly string[]): Scope {
    const scope = this.scopeFromNamespace(namespace) ?? {};
    return validateScope(scope, this.memory.config.limits.maxScopeLength, 'langgraph-store');
  }
}

function prefixFilter(prefix: readonly string[]): MemoryFilter & { metadata: Record<string, string | number | boolean> } {
  return {
    tags: [STORE_ITEM_TAG],
    metadata: Object.fromEntries(prefix.map((label, position) => [`${META.label}${position}`, label])),
  };
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

/** LangGraph's namespace rules: non-empty string labels without "." or ":"; a put's namespace is not empty and not under "langgraph". */
function checkNamespace(namespace: readonly string[], allowEmpty: boolean): void {
  if (!Array.isArray(namespace)) throw invalid('a namespace must be an array of strings');
  if (namespace.length === 0 && !allowEmpty) throw invalid('a namespace cannot be empty');
  for (const label of namespace) {
    if (typeof label !== 'string' || label === '') throw invalid(`namespace labels must be non-empty strings, got ${JSON.stringify(label)}`);
    if (label.includes('.') || label.includes(':')) throw invalid(`namespace label "${label}" holds "." or ":", which LangGraph does not allow`);
  }
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'langgraph-store', message });
}
