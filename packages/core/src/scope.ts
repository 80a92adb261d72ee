import { controlCharacterAt } from './control-characters.js';
import { describeValue, MemloomError } from './errors.js';
import { SCOPE_KEYS, type MemoryFilter, type MemoryRecord, type Scope } from './types.js';
import { hasLoneSurrogate } from './well-formed.js';

/**
 * Validate a scope from outside: only userId / agentId / sessionId, each a
 * non-blank string at most `maxLength` long, without a control character or a bidi control (as record ids:
 * `controlCharacterAt`; a scope value names a folder, a log line and a row the CLI prints).
 * Returns a clean copy holding only the given keys.
 */
export function validateScope(scope: unknown, maxLength = 256, backend = 'core'): Scope {
  const clean: Scope = {};
  for (const [key, value] of scopeEntries(scope, backend)) {
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') {
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend,
        message: `scope.${key} must be a non-empty string`,
        details: { field: key },
      });
    }
    if (value.length > maxLength) {
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend,
        message: `scope.${key} is ${value.length} characters long; the limit is ${maxLength}`,
        details: { field: key },
      });
    }
    const control = controlCharacterAt(value);
    if (control) {
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend,
        message: `scope.${key} holds a control character or a bidi control (${control})`,
        details: { field: key },
      });
    }
    // An id is not text to show: two ids cut through different emoji would both become U+FFFD in a
    // file name or a UTF-8 key, and be one user. Refused, as the Markdown store refuses it.
    if (hasLoneSurrogate(value)) {
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        backend,
        message: `scope.${key} holds a lone half of a UTF-16 pair (a string cut through an emoji)`,
        details: { field: key },
      });
    }
    clean[key as keyof Scope] = value;
  }
  return clean;
}

/**
 * A scope's entries, its shape checked as the facade (`validateScope`) and stores (`assertQueryScope`) both
 * check it: none when it is absent, else an object with no keys but userId, agentId and sessionId
 * (INVALID_SCOPE naming the backend otherwise, led by `what`, such as `list`, when given). Its values are
 * the caller's to check.
 */
export function scopeEntries(scope: unknown, backend: string, what?: string): [string, unknown][] {
  if (scope === undefined || scope === null) return [];
  const lead = what === undefined ? '' : `${what}: `;
  if (typeof scope !== 'object' || Array.isArray(scope)) {
    throw new MemloomError({ code: 'INVALID_SCOPE', backend, message: `${lead}scope must be an object like { userId: "alice" }, got ${describeValue(scope)}` });
  }
  const entries = Object.entries(scope);
  for (const [key] of entries) {
    if (!(SCOPE_KEYS as readonly string[]).includes(key)) {
      throw new MemloomError({ code: 'INVALID_SCOPE', backend, message: `${lead}unknown scope field "${key}" (expected userId, agentId or sessionId)`, details: { field: key } });
    }
  }
  return entries;
}

/** True when no scope field is set. */
export function isEmptyScope(scope: Scope): boolean {
  return SCOPE_KEYS.every((key) => scope[key] === undefined);
}

/**
 * A scope for a message: `user "alice", agent "helper"` (each value quoted as `describeValue` quotes it), or
 * `no scope`. The CLI and the facade name the scope a memory was looked for in with it.
 */
export function scopeDescription(scope: Scope): string {
  const words: Record<keyof Scope, string> = { userId: 'user', agentId: 'agent', sessionId: 'session' };
  const parts = SCOPE_KEYS.filter((key) => scope[key] !== undefined).map((key) => `${words[key]} ${describeValue(scope[key])}`);
  return parts.length > 0 ? parts.join(', ') : 'no scope';
}

/** A stable string key for a scope (used for locks and folder-independent maps). */
export function scopeKey(scope: Scope): string {
  return JSON.stringify(SCOPE_KEYS.map((key) => scope[key] ?? null));
}

/**
 * Whether a memory is inside `scope`: every field the scope sets must match.
 * With `exact`, fields the scope leaves out must be absent on the memory too.
 */
export function inScope(memoryScope: Scope, scope: Scope | undefined, exact = false): boolean {
  if (!scope) return true;
  for (const key of SCOPE_KEYS) {
    const wanted = scope[key];
    if (wanted !== undefined) {
      if (memoryScope[key] !== wanted) return false;
    } else if (exact && memoryScope[key] !== undefined) {
      return false;
    }
  }
  return true;
}

/** Whether a record passes every field of a filter. For one record: a loop over many takes `filterMatcher`. */
export function matchesFilter(record: MemoryRecord, filter: MemoryFilter | undefined): boolean {
  return filterMatcher(filter)(record);
}

/**
 * `matchesFilter` with the filter read once, for a loop over many records: its `ids` go into a set, so a
 * query naming 20,000 ids over 50,000 memories looks each memory up instead of reading the whole list.
 */
export function filterMatcher(filter: MemoryFilter | undefined): (record: MemoryRecord) => boolean {
  if (!filter) return () => true;
  const ids = filter.ids ? new Set(filter.ids) : undefined;
  return (record) => {
    if (!oneOf(record.category, filter.category)) return false;
    if (!oneOf(record.type, filter.type)) return false;
    if (!oneOf(record.level, filter.level)) return false;
    if (!oneOf(record.source, filter.source)) return false;
    if (filter.verified !== undefined && record.verified !== filter.verified) return false;
    if (filter.tags && filter.tags.length > 0 && !filter.tags.some((tag) => record.tags.includes(tag))) return false;
    if (ids && !ids.has(record.id)) return false;
    if (filter.metadata) {
      for (const [key, value] of Object.entries(filter.metadata)) {
        if (record.metadata[key] !== value) return false;
      }
    }
    return true;
  };
}

function oneOf<T>(value: T, wanted: T | T[] | undefined): boolean {
  if (wanted === undefined) return true;
  return Array.isArray(wanted) ? wanted.includes(value) : value === wanted;
}
