import type { RecordDefaults } from './config.js';
import { controlCharacterAt } from './control-characters.js';
import { describeValue, MemloomError } from './errors.js';
import type { MemoryRecord, MemoryVersion, Scope, UpdateTrigger, VersionAction } from './types.js';
import { wellFormed } from './well-formed.js';

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
  context?: string;
}

/** Who added content, and whether it counts as verified: the user's and verified unless said otherwise. */
export function addedBy(fields: Pick<NewRecordFields, 'source' | 'verified'>): { source: MemoryRecord['source']; verified: boolean } {
  const source = fields.source ?? 'user';
  return { source, verified: fields.verified ?? source === 'user' };
}

/** A fresh full-level memory at weight 1. */
export function createRecord(fields: NewRecordFields, defaults: RecordDefaults): MemoryRecord {
  const importance = fields.importance ?? defaults.importance;
  const { source, verified } = addedBy(fields);
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
    verified,
    sources: unique(fields.sources ?? []),
    tags: unique(fields.tags ?? []),
    metadata: { ...(fields.metadata ?? {}) },
    ...(fields.context ? { context: fields.context } : {}),
    revision: 1,
  };
}

/** The version entry that records `before` becoming `after`, with copies of both. */
export function versionOf(
  before: MemoryRecord | null,
  after: MemoryRecord,
  change: { trigger: UpdateTrigger; action: VersionAction; reason: string; atIso: string },
): MemoryVersion {
  return versionHolding(before ? copyRecord(before) : null, copyRecord(after), change);
}

/**
 * The version entry holding `before` and `after` themselves, not copies: for
 * a caller that made both records for this one change and changes neither
 * afterwards (a maintenance pass builds tens of thousands; stores copy or
 * serialize what they keep).
 */
export function versionHolding(
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
    before,
    after,
  };
}

/**
 * The newest version of a memory, up to `revision`, that holds its text as
 * written rather than a compression of it: the text a memory compressed
 * since stands for (seed 004: the full text stays in history). That is a
 * version at level full, or one whose text was set below full by anything
 * but compression: a merge (it writes its merged text whole, whatever level
 * it lands on, whatever its trigger: `import` too), an edit. A restore below
 * full brings back an earlier version's text, so it stands for what that
 * version stands for: the newest earlier version with the same content and
 * level is read in its place (skipped when there is none). A maintenance
 * pass's compressions, the versions that keep the content (a boost, a decay,
 * a review) and an import's stand-ins for versions its source did not have
 * (`importStandIn`) hold no text of their own. Undefined when no version
 * does.
 */
export function lastWrittenVersion(history: readonly MemoryVersion[], revision: number): MemoryVersion | undefined {
  const versions = history.filter((version) => version.version <= revision).sort((a, b) => a.version - b.version);
  for (let index = versions.length - 1; index >= 0; index--) {
    const version = versions[index] as MemoryVersion;
    const { after, before } = version;
    if (after.level === 'full') return version;
    if (version.trigger === 'restore') {
      // The loop looks at the version restored next (at the one before when it is not found).
      const restored = versions.findLastIndex((earlier, at) => at < index && earlier.after.content === after.content && earlier.after.level === after.level);
      if (restored >= 0) index = restored + 1;
      continue;
    }
    if (version.trigger !== 'passive_decay' && !isImportStandIn(version) && after.content !== before?.content) return version;
  }
  return undefined;
}

/**
 * Whether a version may be one an import or a copy wrote (`importStandIn`) for a version its source did
 * not have: trigger `import`, action `create` or `edit`. It holds the memory's state as imported, not a
 * text anyone wrote at that revision. An `add` with trigger `import` writes a `merge`, a `boost` or a
 * `create` at level full, which `lastWrittenVersion` takes for its level first.
 */
function isImportStandIn(version: Pick<MemoryVersion, 'trigger' | 'action'>): boolean {
  return version.trigger === 'import' && (version.action === 'create' || version.action === 'edit');
}

/**
 * The version an import or a copy writes for version `after.revision` of a memory, which its source did
 * not have (a store takes revision n only after n - 1): `lastWrittenVersion` knows it as holding no text
 * of its own.
 */
export function importStandIn(before: MemoryRecord | null, after: MemoryRecord, reason: string): MemoryVersion {
  return versionHolding(before, after, { trigger: 'import', action: after.revision === 1 ? 'create' : 'edit', reason, atIso: after.updatedAt });
}

/**
 * A deep copy of a record, equal to `structuredClone(record)`: plain objects
 * and arrays (the whole of a record, in practice) are copied here, which is
 * several times faster than `structuredClone` on objects this small; any
 * other object inside (a Date in metadata, a class instance), and anything
 * nested deeper than a record ever is, goes to `structuredClone`, cycles,
 * errors and all.
 */
export function copyRecord(record: MemoryRecord): MemoryRecord {
  const copy = copyPlain(record, 0);
  return copy === TOO_DEEP ? structuredClone(record) : (copy as MemoryRecord);
}

const TOO_DEEP = Symbol('too deep');
const MAX_COPY_DEPTH = 16;

function copyPlain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    // structuredClone refuses functions and symbols (DataCloneError): so does this copy.
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  }
  if (depth > MAX_COPY_DEPTH) return TOO_DEEP;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype === Array.prototype) {
    const source = value as unknown[];
    const copy = new Array<unknown>(source.length);
    for (let index = 0; index < source.length; index++) {
      if (!(index in source)) continue;
      const item = copyPlain(source[index], depth + 1);
      if (item === TOO_DEEP) return TOO_DEEP;
      copy[index] = item;
    }
    return copy;
  }
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copyPlain((value as Record<string, unknown>)[key], depth + 1);
    if (item === TOO_DEEP) return TOO_DEEP;
    copy[key] = item;
  }
  return copy;
}

/** Validate and trim content; throws EMPTY_CONTENT or CONTENT_TOO_LONG. */
export function validateContent(content: unknown, maxLength: number, field = 'content'): string {
  if (typeof content !== 'string') {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `${field} must be a string, got ${content === null ? 'null' : typeof content}` });
  }
  // Half of a UTF-16 pair without its other half (a string cut in the wrong place) becomes U+FFFD, as UTF-8
  // would make it: every store can then keep the text as given (Qdrant's server refuses it in JSON).
  const trimmed = wellFormed(content.trim());
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

/**
 * Check a memory id given to look one up (`get`, `update`, `delete`, `history`, `restore`): a non-blank string of
 * at most 256 characters. No more: a store written before `newIdProblem`'s rule (0.1.0) may hold an id with a
 * control character, and it must stay readable, editable and deletable.
 */
export function validateId(id: unknown): string {
  if (typeof id !== 'string' || id.trim() === '' || id.length > 256) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: 'a memory id must be a non-empty string of at most 256 characters' });
  }
  return id;
}

/**
 * Why `id` may not name a NEW memory, or undefined when it may: the one rule for every id that enters a store
 * (a put that creates, an import or copy of new memories). A string, not blank, at most 256 characters, and
 * without a control character or a bidi control (`controlCharacterAt`), which would make a terminal or a log
 * show other text: the message names it by code point and never prints it (nor a blank or overlong id whole).
 */
export function newIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string') return `a memory id must be a string, got ${describeValue(id)}`;
  if (id.trim() === '') return `a memory id must not be blank, got ${describeValue(id)}`;
  if (id.length > 256) return `a memory id must be at most 256 characters long; this one is ${id.length}`;
  const control = controlCharacterAt(id);
  if (control) return `a memory id must not hold a control character or a bidi control, which would print as other text; this one holds ${control}`;
  return undefined;
}

/** Tags of a memory that took in more: its own first, within `maxTags`, and never fewer than it had. */
export function mergeTags(kept: readonly string[], more: readonly string[], maxTags: number): string[] {
  return unique([...kept, ...more]).slice(0, Math.max(maxTags, kept.length));
}

export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
