import { MemloomError, type MemoryRecord, type MemoryVersion, type Scope } from '@memloom/core';
import { BACKEND } from './connection.js';
import { applyBeforePatch } from './version-patch.js';

/** Columns read for a record, prefixed with the `m` alias every query gives `memories`. */
export const RECORD_COLUMNS = [
  'row_id',
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
]
  .map((column) => `m.${column}`)
  .join(', ');

export interface MemoryRow {
  row_id: number;
  id: string;
  user_id: string | null;
  agent_id: string | null;
  session_id: string | null;
  content: string;
  level: string;
  weight: number;
  base_weight: number;
  importance: number;
  base_importance: number;
  category: string;
  memory_type: string;
  source: string;
  verified: number;
  created_at: string;
  updated_at: string;
  last_accessed_at: string;
  sources: string;
  tags: string;
  metadata: string;
  revision: number;
}

/** Parameters for INSERT / UPDATE of `memories`, by column name. */
export function recordParams(memory: MemoryRecord): Record<string, string | number | null> {
  return {
    id: memory.id,
    user_id: memory.scope.userId ?? null,
    agent_id: memory.scope.agentId ?? null,
    session_id: memory.scope.sessionId ?? null,
    content: memory.content,
    level: memory.level,
    weight: memory.weight,
    base_weight: memory.baseWeight,
    importance: memory.importance,
    base_importance: memory.baseImportance,
    category: memory.category,
    memory_type: memory.type,
    source: memory.source,
    verified: memory.verified ? 1 : 0,
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    last_accessed_at: memory.lastAccessedAt,
    sources: JSON.stringify(memory.sources),
    tags: JSON.stringify(memory.tags),
    metadata: JSON.stringify(memory.metadata),
    revision: memory.revision,
  };
}

export const WRITABLE_COLUMNS = Object.keys(recordParams(emptyRecord()));

/** A stored row back into a record; a row that does not parse is reported as damage. */
export function rowToRecord(row: MemoryRow): MemoryRecord {
  const scope: Scope = {};
  if (row.user_id !== null) scope.userId = row.user_id;
  if (row.agent_id !== null) scope.agentId = row.agent_id;
  if (row.session_id !== null) scope.sessionId = row.session_id;
  return {
    id: row.id,
    content: row.content,
    level: row.level as MemoryRecord['level'],
    weight: row.weight,
    baseWeight: row.base_weight,
    importance: row.importance,
    baseImportance: row.base_importance,
    category: row.category as MemoryRecord['category'],
    type: row.memory_type as MemoryRecord['type'],
    scope,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastAccessedAt: row.last_accessed_at,
    source: row.source as MemoryRecord['source'],
    verified: row.verified === 1,
    sources: parseJson(row.sources, row.id, 'sources') as string[],
    tags: parseJson(row.tags, row.id, 'tags') as string[],
    metadata: parseJson(row.metadata, row.id, 'metadata') as Record<string, unknown>,
    revision: row.revision,
  };
}

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

function emptyRecord(): MemoryRecord {
  return {
    id: '',
    content: '',
    level: 'full',
    weight: 0,
    baseWeight: 0,
    importance: 0,
    baseImportance: 0,
    category: 'fact',
    type: 'user',
    scope: {},
    createdAt: '',
    updatedAt: '',
    lastAccessedAt: '',
    source: 'user',
    verified: false,
    sources: [],
    tags: [],
    metadata: {},
    revision: 0,
  };
}
