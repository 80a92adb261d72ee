import { MemloomError, type MemoryRecord, type MemoryVersion, type Scope } from '@memloom/core';
import { BACKEND } from './connection.js';
import { applyBeforePatch } from './version-patch.js';

/** The columns of `memories` a record is written to, in the order of `recordValues`. */
export const WRITABLE_COLUMNS = [
  'id',
  'user_id',
  'agent_id',
  'session_id',
  'content',
  'level',
  'weight',
  'base_weight',
  'importance',
  'base_importance',
  'category',
  'memory_type',
  'source',
  'verified',
  'created_at',
  'updated_at',
  'last_accessed_at',
  'sources',
  'tags',
  'metadata',
  'revision',
  'context',
] as const;

/**
 * Columns read for a record, prefixed with the `m` alias every query gives
 * `memories`: `row_id`, then WRITABLE_COLUMNS. Records are read with raw
 * (array) statements: better-sqlite3 builds an array much faster than an
 * object of 23 named fields, and a maintenance pass reads every record.
 */
export const RECORD_COLUMNS = ['row_id', ...WRITABLE_COLUMNS].map((column) => `m.${column}`).join(', ');

/** A row read with RECORD_COLUMNS: `[row_id, ...recordValues]`, then any extra selected columns. */
export type MemoryRow = readonly unknown[];

/** Where the first column selected after RECORD_COLUMNS lands in a MemoryRow. */
export const AFTER_RECORD = WRITABLE_COLUMNS.length + 1;

/** What INSERT / UPDATE write to `memories`, in WRITABLE_COLUMNS order. */
export function recordValues(memory: MemoryRecord): (string | number | null)[] {
  return [
    memory.id,
    memory.scope.userId ?? null,
    memory.scope.agentId ?? null,
    memory.scope.sessionId ?? null,
    memory.content,
    memory.level,
    memory.weight,
    memory.baseWeight,
    memory.importance,
    memory.baseImportance,
    memory.category,
    memory.type,
    memory.source,
    memory.verified ? 1 : 0,
    memory.createdAt,
    memory.updatedAt,
    memory.lastAccessedAt,
    JSON.stringify(memory.sources),
    JSON.stringify(memory.tags),
    JSON.stringify(memory.metadata),
    memory.revision,
    memory.context ?? null,
  ];
}

/** The scope kept in the user_id, agent_id and session_id columns (NULL: field absent). */
export function scopeOfColumns(userId: string | null, agentId: string | null, sessionId: string | null): Scope {
  const scope: Scope = {};
  if (userId !== null) scope.userId = userId;
  if (agentId !== null) scope.agentId = agentId;
  if (sessionId !== null) scope.sessionId = sessionId;
  return scope;
}

/** A stored row back into a record; a row that does not parse is reported as damage. */
export function rowToRecord(row: MemoryRow): MemoryRecord {
  const id = row[1] as string;
  const scope = scopeOfColumns(row[2] as string | null, row[3] as string | null, row[4] as string | null);
  const context = row[22] as string | null;
  const record: MemoryRecord = {
    id,
    content: row[5] as string,
    level: row[6] as MemoryRecord['level'],
    weight: row[7] as number,
    baseWeight: row[8] as number,
    importance: row[9] as number,
    baseImportance: row[10] as number,
    category: row[11] as MemoryRecord['category'],
    type: row[12] as MemoryRecord['type'],
    scope,
    createdAt: row[15] as string,
    updatedAt: row[16] as string,
    lastAccessedAt: row[17] as string,
    source: row[13] as MemoryRecord['source'],
    verified: row[14] === 1,
    sources: parseField(row[18] as string, id, 'sources') as string[],
    tags: parseField(row[19] as string, id, 'tags') as string[],
    metadata: parseField(row[20] as string, id, 'metadata') as Record<string, unknown>,
    revision: row[21] as number,
  };
  if (context !== null) record.context = context;
  return record;
}

/** The row id of a MemoryRow. */
export function rowIdOf(row: MemoryRow): number {
  return row[0] as number;
}

/** The `versions v` columns a VersionRow holds, in its order. */
export const VERSION_COLUMNS = 'v.version, v.at, v.change_trigger, v.change_action, v.reason, v.before_json, v.before_patch, v.after_json';

export interface VersionRow {
  version: number;
  at: string;
  change_trigger: string;
  change_action: string;
  reason: string;
  /** Schema 1 rows, and a `before` that is not a plain record: the whole record. */
  before_json: string | null;
  /** Schema 2: `before` as a patch against `after` (see version-patch.ts). */
  before_patch: string | null;
  after_json: string;
}

export function rowToVersion(memoryId: string, row: VersionRow): MemoryVersion {
  return {
    memoryId,
    version: row.version,
    at: row.at,
    trigger: row.change_trigger as MemoryVersion['trigger'],
    action: row.change_action as MemoryVersion['action'],
    reason: row.reason,
    before:
      row.before_patch !== null
        ? (parseJson(row.after_json, memoryId, 'history', (afterJson) => applyBeforePatch(afterJson, row.before_patch as string)) as MemoryRecord)
        : row.before_json === null
          ? null
          : (parseJson(row.before_json, memoryId, 'history') as MemoryRecord),
    after: parseJson(row.after_json, memoryId, 'history') as MemoryRecord,
  };
}

/** A record's JSON column; most hold `[]` or `{}` (no tags, no metadata), made here without the parser. */
function parseField(text: string, id: string, field: string): unknown {
  if (text === '[]') return [];
  if (text === '{}') return {};
  return parseJson(text, id, field);
}

function parseJson(text: string, id: string, field: string, parse: (text: string) => unknown = JSON.parse): unknown {
  try {
    return parse(text);
  } catch (error) {
    throw new MemloomError({
      code: 'STORE_CORRUPT',
      backend: BACKEND,
      message: `memory ${id}: stored ${field} is not valid JSON`,
      cause: error,
      details: { id, field },
    });
  }
}
