import { MemloomError, type MemoryRecord, type MemoryVersion, type Scope } from '@memloom/core';

/** What a point in the collection holds. */
export const KIND = { memory: 'memory', version: 'version', meta: 'meta' } as const;

/** Bumped when the layout of points changes; a newer layout is refused with SCHEMA_TOO_NEW. */
export const SCHEMA_VERSION = 1;

/** Payload of a memory point: the record's fields flat (scope fields at the top, for the tenant index). */
export interface MemoryPayload {
  kind: typeof KIND.memory;
  id: string;
  content: string;
  level: MemoryRecord['level'];
  weight: number;
  baseWeight: number;
  importance: number;
  baseImportance: number;
  category: MemoryRecord['category'];
  type: MemoryRecord['type'];
  userId?: string;
  agentId?: string;
  sessionId?: string;
  createdAt: string;
  updatedAt: string;
  lastAccessedAt: string;
  /** Epoch milliseconds, indexed as integers so Qdrant can order by them. */
  createdAtMs: number;
  updatedAtMs: number;
  source: MemoryRecord['source'];
  verified: boolean;
  sources: string[];
  /** The text the memory was said in; absent when it has none. */
  context?: string;
  tags: string[];
  metadata: Record<string, unknown>;
  revision: number;
  /** Unique id of the write that produced this revision; its version point carries the same. */
  writeId: string;
}

/** Payload of a version point. */
export interface VersionPayload {
  kind: typeof KIND.version;
  memoryId: string;
  version: number;
  writeId: string;
  /** writeId of the version before this one (null for a creation): history is the chain from the memory's writeId. */
  parentWriteId: string | null;
  /** Scope of the memory, so a user's versions live in the same tenant partition. */
  userId?: string;
  entry: MemoryVersion;
}

export interface MetaPayload {
  kind: typeof KIND.meta;
  schemaVersion: number;
  embedderId: string;
  dimension: number;
  /**
   * Core's `TOKENIZER_VERSION` that made the memories' keyword vectors; absent in collections
   * made before it was recorded. Written when the collection is made, and after each rebuild.
   */
  tokenizerVersion?: number;
}

export function toMemoryPayload(record: MemoryRecord, writeId: string): MemoryPayload {
  return {
    kind: KIND.memory,
    id: record.id,
    content: record.content,
    level: record.level,
    weight: record.weight,
    baseWeight: record.baseWeight,
    importance: record.importance,
    baseImportance: record.baseImportance,
    category: record.category,
    type: record.type,
    ...scopeFields(record.scope),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastAccessedAt: record.lastAccessedAt,
    createdAtMs: epochMs(record.createdAt),
    updatedAtMs: epochMs(record.updatedAt),
    source: record.source,
    verified: record.verified,
    sources: [...record.sources],
    ...(record.context !== undefined ? { context: record.context } : {}),
    tags: [...record.tags],
    metadata: record.metadata,
    revision: record.revision,
    writeId,
  };
}

/**
 * Rebuild a record from a memory point's payload; a point that is not one is
 * STORE_CORRUPT. A payload without a context (or with null) gives a record
 * without the key.
 */
export function fromMemoryPayload(payload: unknown): MemoryRecord {
  const value = payload as Partial<MemoryPayload> | null | undefined;
  if (!value || value.kind !== KIND.memory || typeof value.id !== 'string' || typeof value.revision !== 'number') {
    throw new MemloomError({ code: 'STORE_CORRUPT', backend: 'qdrant', message: 'a point read as a memory does not hold a memloom memory payload' });
  }
  const context: unknown = value.context;
  if (context !== undefined && context !== null && typeof context !== 'string') {
    throw new MemloomError({
      code: 'STORE_CORRUPT',
      backend: 'qdrant',
      message: `memory ${value.id} is stored with a context that is not a string`,
      details: { id: value.id },
    });
  }
  const scope: Scope = {};
  if (typeof value.userId === 'string') scope.userId = value.userId;
  if (typeof value.agentId === 'string') scope.agentId = value.agentId;
  if (typeof value.sessionId === 'string') scope.sessionId = value.sessionId;
  return {
    id: value.id,
    content: value.content as string,
    level: value.level as MemoryRecord['level'],
    weight: value.weight as number,
    baseWeight: value.baseWeight as number,
    importance: value.importance as number,
    baseImportance: value.baseImportance as number,
    category: value.category as MemoryRecord['category'],
    type: value.type as MemoryRecord['type'],
    scope,
    createdAt: value.createdAt as string,
    updatedAt: value.updatedAt as string,
    lastAccessedAt: value.lastAccessedAt as string,
    source: value.source as MemoryRecord['source'],
    verified: value.verified as boolean,
    sources: [...(value.sources ?? [])],
    ...(typeof context === 'string' ? { context } : {}),
    tags: [...(value.tags ?? [])],
    metadata: (value.metadata ?? {}) as Record<string, unknown>,
    revision: value.revision,
  };
}

/** A stored memory point's record and the write it holds (its `writeId`); STORE_CORRUPT, naming the memory, without one. */
export function fromStoredMemory(payload: unknown): { record: MemoryRecord; writeId: string } {
  const record = fromMemoryPayload(payload);
  const { writeId } = payload as Partial<MemoryPayload>;
  if (typeof writeId !== 'string') {
    throw new MemloomError({ code: 'STORE_CORRUPT', backend: 'qdrant', message: `memory ${record.id} is stored without a write id`, details: { id: record.id } });
  }
  return { record, writeId };
}

/**
 * What a memory point's keyword vector is made from (its content and context), read from a payload that may be
 * damaged elsewhere (one `fromMemoryPayload` refuses): undefined without a string content, a context that is
 * not a string left out.
 */
export function storedKeywordFields(payload: unknown): Pick<MemoryRecord, 'content' | 'context'> | undefined {
  const { content, context } = (payload ?? {}) as { content?: unknown; context?: unknown };
  if (typeof content !== 'string') return undefined;
  return { content, ...(typeof context === 'string' ? { context } : {}) };
}

export function toVersionPayload(entry: MemoryVersion, writeId: string, parentWriteId: string | null): VersionPayload {
  return {
    kind: KIND.version,
    memoryId: entry.memoryId,
    version: entry.version,
    writeId,
    parentWriteId,
    ...(entry.after.scope.userId !== undefined ? { userId: entry.after.scope.userId } : {}),
    entry,
  };
}

export function fromVersionPayload(payload: unknown): VersionPayload {
  const value = payload as Partial<VersionPayload> | null | undefined;
  if (!value || value.kind !== KIND.version || typeof value.writeId !== 'string' || !value.entry) {
    throw new MemloomError({ code: 'STORE_CORRUPT', backend: 'qdrant', message: 'a point read as a version does not hold a memloom version payload' });
  }
  return value as VersionPayload;
}

function scopeFields(scope: Scope): Pick<MemoryPayload, 'userId' | 'agentId' | 'sessionId'> {
  return {
    ...(scope.userId !== undefined ? { userId: scope.userId } : {}),
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
    ...(scope.sessionId !== undefined ? { sessionId: scope.sessionId } : {}),
  };
}

function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : 0;
}
