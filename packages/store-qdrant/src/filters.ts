import { MemloomError, SCOPE_KEYS, type MemoryFilter, type Scope } from '@memloom/core';
import type { Schemas } from './client.js';
import { KIND } from './payload.js';
import { memoryPointId } from './point-ids.js';

type Filter = Schemas['Filter'];
type Condition = Schemas['Condition'];

/** Payload indexes every memloom collection gets: the scope fields and every field `MemoryFilter`, ordering or a conditional write uses. */
export const PAYLOAD_INDEXES: ReadonlyArray<{ field: string; schema: Schemas['PayloadFieldSchema'] }> = [
  // Qdrant's recommendation for many users in one collection: a tenant index on the user field.
  { field: 'userId', schema: { type: 'keyword', is_tenant: true } },
  { field: 'agentId', schema: 'keyword' },
  { field: 'sessionId', schema: 'keyword' },
  { field: 'kind', schema: 'keyword' },
  { field: 'memoryId', schema: 'keyword' },
  { field: 'category', schema: 'keyword' },
  { field: 'type', schema: 'keyword' },
  { field: 'level', schema: 'keyword' },
  { field: 'source', schema: 'keyword' },
  { field: 'verified', schema: 'bool' },
  { field: 'tags', schema: 'keyword' },
  { field: 'revision', schema: 'integer' },
  { field: 'createdAtMs', schema: { type: 'integer', lookup: false, range: true } },
  { field: 'updatedAtMs', schema: { type: 'integer', lookup: false, range: true } },
  // Conditional writes and their undo filter on the write read (strict mode refuses unindexed filters).
  { field: 'writeId', schema: 'keyword' },
];

/**
 * The Qdrant filter selecting memories in `scope` that pass `filter`. Every
 * given scope field must match exactly; with `exactScope` the others must be
 * absent (`is_empty`). Nothing is filtered in JavaScript.
 */
export function memoryFilter(scope?: Scope, filter?: MemoryFilter, exactScope = false): Filter {
  const must: Condition[] = [match('kind', KIND.memory)];
  for (const key of SCOPE_KEYS) {
    const wanted = scope?.[key];
    if (wanted !== undefined) must.push(match(key, wanted));
    else if (exactScope && scope) must.push({ is_empty: { key } });
  }
  if (filter) must.push(...fieldConditions(filter));
  return { must };
}

/** Versions of one memory. */
export function versionsOf(memoryId: string): Filter {
  return { must: [match('kind', KIND.version), match('memoryId', memoryId)] };
}

/** Versions of several memories. */
export function versionsOfMany(memoryIds: readonly string[]): Filter {
  return { must: [match('kind', KIND.version), { key: 'memoryId', match: { any: [...memoryIds] } }] };
}

function fieldConditions(filter: MemoryFilter): Condition[] {
  const conditions: Condition[] = [];
  for (const key of ['category', 'type', 'level', 'source'] as const) {
    const wanted = filter[key];
    if (wanted === undefined) continue;
    conditions.push(Array.isArray(wanted) ? { key, match: { any: [...wanted] } } : match(key, wanted));
  }
  if (filter.verified !== undefined) conditions.push(match('verified', filter.verified));
  if (filter.tags && filter.tags.length > 0) conditions.push({ key: 'tags', match: { any: [...filter.tags] } });
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    const path = `metadata.${metadataKey(key)}`;
    // Qdrant matches integers, strings and booleans exactly; other numbers need a closed range.
    if (typeof value === 'number' && !Number.isInteger(value)) conditions.push({ key: path, range: { gte: value, lte: value } });
    else conditions.push(match(path, value));
    // A condition on an array matches when any element does; core compares the value itself.
    conditions.push({ key: path, values_count: { lte: 1 } });
  }
  // Points are named by their memory's id (`memoryPointId`); an empty list matches none.
  if (filter.ids) conditions.push({ has_id: filter.ids.map(memoryPointId) });
  return conditions;
}

/**
 * A top-level metadata key as one step of a Qdrant JSON path: bare when it is
 * letters, digits, `_` and `-` only, else quoted ("a.b" is the key "a.b", not
 * a nested field). Qdrant's paths cannot hold `"` or `\\` in a key.
 */
function metadataKey(key: string): string {
  if (/^[\p{L}\p{N}_-]+$/u.test(key)) return key;
  if (/["\\]/u.test(key)) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend: 'qdrant', message: `a metadata filter key cannot hold " or \\ with the Qdrant store, got ${JSON.stringify(key)}` });
  }
  return `"${key}"`;
}

function match(key: string, value: string | number | boolean): Condition {
  return { key, match: { value } };
}
