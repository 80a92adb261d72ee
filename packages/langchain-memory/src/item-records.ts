import type { Item } from '@langchain/langgraph';
import type { MemoryFilter, MemoryRecord } from '@memloom/core';

// How a LangGraph store item is kept in a memloom memory, and read back.

/** Tag on every memory that holds a LangGraph store item. */
export const STORE_ITEM_TAG = 'langgraph-item';

/** Metadata keys of an item's memory. `lgNs_0`, `lgNs_1`, … hold the labels so a namespace prefix is an equality filter. */
export const META = {
  namespace: 'lgNamespace',
  label: 'lgNs_',
  depth: 'lgDepth',
  key: 'lgKey',
  value: 'lgValue',
  indexed: 'lgIndexed',
  sequence: 'lgSeq',
  ownRevision: 'lgRevision',
} as const;

/** A filter for memories holding items, with the metadata it matches. */
export type ItemFilter = MemoryFilter & { metadata: Record<string, string | number | boolean> };

/** The memories holding the items under a namespace prefix (every item for an empty one). */
export function prefixFilter(prefix: readonly string[]): ItemFilter {
  return {
    tags: [STORE_ITEM_TAG],
    metadata: Object.fromEntries(prefix.map((label, position) => [`${META.label}${position}`, label])),
  };
}

/** The memories holding one item: its copies (see `MemloomStore.writeItem`). */
export function itemFilter(namespace: readonly string[], key: string): ItemFilter {
  return { tags: [STORE_ITEM_TAG], metadata: { [META.namespace]: JSON.stringify(namespace), [META.key]: key } };
}

/** What a put keeps of an item in its memory's metadata. */
export interface ItemWrite {
  namespace: readonly string[];
  key: string;
  value: Record<string, unknown>;
  /** Whether the item has text to rank (see `indexedOnly`). */
  indexed: boolean;
  /** The put's place in this process's write order (see `newestFirst`). */
  sequence: number;
  /** The revision the write gives the memory when it holds only the item's own writes (see `ownRevisionOf`). */
  ownRevision: number | undefined;
}

/** The metadata of an item's memory, with the labels a prefix search matches (see `prefixFilter`). */
export function itemMetadata(item: ItemWrite): Record<string, unknown> {
  return {
    [META.namespace]: JSON.stringify(item.namespace),
    [META.depth]: item.namespace.length,
    ...prefixFilter(item.namespace).metadata,
    [META.key]: item.key,
    [META.value]: item.value,
    [META.indexed]: item.indexed,
    [META.sequence]: item.sequence,
    ...(item.ownRevision !== undefined ? { [META.ownRevision]: item.ownRevision } : {}),
  };
}

/** The filter narrowed to memories whose item has text to rank (not put with `index: false`). */
export function indexedOnly(filter: ItemFilter): ItemFilter {
  return { ...filter, metadata: { ...filter.metadata, [META.indexed]: true } };
}

/** Whether the memory's item has text to rank (see `indexedOnly`). */
export function isIndexed(record: MemoryRecord): boolean {
  return record.metadata[META.indexed] === true;
}

/** Newest first: by updatedAt, then by write sequence (puts in the same millisecond), then by id. */
export function newestFirst(a: MemoryRecord, b: MemoryRecord): number {
  return descending(a.updatedAt, b.updatedAt) || sequenceOf(b) - sequenceOf(a) || descending(a.id, b.id);
}

/** The metadata keys the store writes on an item's memory. */
export function isItemMetadataKey(key: string): boolean {
  return key.startsWith(META.label) || Object.values(META).some((name) => name === key);
}

/**
 * What a memory holding an item is known to hold: only the item's own writes (`own`), another
 * writer's content too (`other`), or not known (`unchecked`: a `system` store reads no history).
 */
export type ItemContent = 'own' | 'other' | 'unchecked';

/**
 * The revision a put's write gives the item's memory, kept in its metadata (`lgRevision`) when the
 * memory is known to hold only the item's own writes: it is new (revision 1), or it was checked
 * (`own`: it was still at the revision of the last such write, or its history holds no merge
 * and no model's UPDATE). Any later change (a merge, a model's UPDATE, `memory.update`, decay,
 * another store's put that could not tell) moves the revision past the mark, and the next put
 * reads the history again, as it does for memories written before the mark existed. So a put
 * reads no history while the store is the memory's only writer, however long its history.
 * The write itself bumps the revision by one (`Memory.update`), and only from the revision read:
 * a change that lands first is a CONFLICT and the put looks again; one that lands after leaves
 * the memory past the mark.
 */
export function ownRevisionOf(current: MemoryRecord | undefined, content: ItemContent | undefined): number | undefined {
  if (!current) return 1;
  return content === 'own' ? current.revision + 1 : undefined;
}

/** Whether nothing changed the memory since a put marked it (see `ownRevisionOf`). */
export function isUnchangedSinceOwnWrite(record: MemoryRecord): boolean {
  return record.metadata[META.ownRevision] === record.revision;
}

/** Records as items: newest first, each item once (its newest copy). */
export function itemsNewestFirst(records: MemoryRecord[]): MemoryRecord[] {
  return newestCopies(records.sort(newestFirst), (record) => record);
}

/** The entries whose memory is the newest copy of its item (see `MemloomStore.writeItem`), in their order. */
export function newestCopies<T>(entries: T[], recordOf: (entry: T) => MemoryRecord): T[] {
  const newest = new Map<string, MemoryRecord>();
  for (const entry of entries) {
    const record = recordOf(entry);
    const item = itemIdOf(record);
    const known = newest.get(item);
    if (!known || newestFirst(record, known) < 0) newest.set(item, record);
  }
  return entries.filter((entry) => newest.get(itemIdOf(recordOf(entry))) === recordOf(entry));
}

/** The item's value as its memory holds it (what a value filter matches). */
export function storedValueOf(record: MemoryRecord): unknown {
  return record.metadata[META.value];
}

export function toItem(record: MemoryRecord): Item {
  const namespace = namespaceOf(record) ?? [];
  const value = storedValueOf(record);
  return {
    namespace,
    key: String(record.metadata[META.key]),
    value: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {},
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

export function namespaceOf(record: MemoryRecord): string[] | undefined {
  const raw = record.metadata[META.namespace];
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) && parsed.every((label) => typeof label === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function itemIdOf(record: MemoryRecord): string {
  return JSON.stringify([record.metadata[META.namespace], record.metadata[META.key]]);
}

function sequenceOf(record: MemoryRecord): number {
  const sequence = record.metadata[META.sequence];
  return typeof sequence === 'number' ? sequence : 0;
}

function descending(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}
