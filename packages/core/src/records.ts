import type { RecordDefaults } from './config.js';
import { MemloomError } from './errors.js';
import type { MemoryRecord, MemoryVersion, Scope, UpdateTrigger, VersionAction } from './types.js';

export interface NewRecordFields {
  id: string;
  content: string;
  scope: Scope;
  atIso: string;
  category?: MemoryRecord['category'];
  type?: MemoryRecord['type'];
  importance?: number;
  source?: MemoryRecord['source'];
  verified?: boolean;
  sources?: string[];
  tags?: string[];
  metadata?: Record<string, unknown>;
}

/** A fresh full-level memory at weight 1. */
export function createRecord(fields: NewRecordFields, defaults: RecordDefaults): MemoryRecord {
  const importance = fields.importance ?? defaults.importance;
  const source = fields.source ?? 'user';
  return {
    id: fields.id,
    content: fields.content,
    level: 'full',
    weight: 1,
    baseWeight: 1,
    importance,
    baseImportance: importance,
    category: fields.category ?? defaults.category,
    type: fields.type ?? defaults.type,
    scope: { ...fields.scope },
    createdAt: fields.atIso,
    updatedAt: fields.atIso,
    lastAccessedAt: fields.atIso,
    source,
    verified: fields.verified ?? source === 'user',
    sources: unique(fields.sources ?? []),
    tags: unique(fields.tags ?? []),
    metadata: { ...(fields.metadata ?? {}) },
    revision: 1,
  };
}

/** The version entry that records `before` becoming `after`. */
export function versionOf(
  before: MemoryRecord | null,
  after: MemoryRecord,
  change: { trigger: UpdateTrigger; action: VersionAction; reason: string; atIso: string },
): MemoryVersion {
  return {
    memoryId: after.id,
    version: after.revision,
    at: change.atIso,
    trigger: change.trigger,
    action: change.action,
    reason: change.reason,
    before: before ? structuredClone(before) : null,
    after: structuredClone(after),
  };
}

/** Validate and trim content; throws EMPTY_CONTENT or CONTENT_TOO_LONG. */
export function validateContent(content: unknown, maxLength: number, field = 'content'): string {
  if (typeof content !== 'string') {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `${field} must be a string, got ${content === null ? 'null' : typeof content}` });
  }
  const trimmed = content.trim();
  if (trimmed === '') throw new MemloomError({ code: 'EMPTY_CONTENT', message: `${field} is empty` });
  if (trimmed.length > maxLength) {
    throw new MemloomError({
      code: 'CONTENT_TOO_LONG',
      message: `${field} is ${trimmed.length} characters long; the limit is ${maxLength} (limits.maxContentLength)`,
      details: { length: trimmed.length, limit: maxLength },
    });
  }
  return trimmed;
}

/** Validate a memory id from outside. */
export function validateId(id: unknown): string {
  if (typeof id !== 'string' || id.trim() === '' || id.length > 256) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: 'a memory id must be a non-empty string of at most 256 characters' });
  }
  return id;
}

export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
