import { SCOPE_KEYS, type MemoryFilter, type Scope } from '@memloom/core';
import type { Schemas } from './client.js';
import { KIND } from './payload.js';

type Filter = Schemas['Filter'];
type Condition = Schemas['Condition'];

/** Payload indexes every memloom collection gets: the scope fields and every field `MemoryFilter` or ordering uses. */
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
    const path = `metadata.${key}`;
    // Qdrant matches integers, strings and booleans exactly; other numbers need a closed range.
    if (typeof value === 'number' && !Number.isInteger(value)) conditions.push({ key: path, range: { gte: value, lte: value } });
    else conditions.push(match(path, value));
  }
  return conditions;
}

function match(key: string, value: string | number | boolean): Condition {
  return { key, match: { value } };
}
