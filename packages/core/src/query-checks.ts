import type { ListOrder } from './contracts.js';
import { describeValue, MemloomError } from './errors.js';
import { isEmptyScope, scopeEntries } from './scope.js';
import { MEMORY_CATEGORIES, MEMORY_LEVELS, MEMORY_SOURCES, MEMORY_TYPES, type MemoryRecord, type Scope } from './types.js';

/** `ListQuery.orderBy`'s values. */
const LIST_ORDERS = ['createdAt', 'updatedAt', 'id', 'stored'] as const satisfies readonly ListOrder[];

/** The `MemoryFilter` fields that name one of core's values, or a list of them. */
const VALUE_FIELDS = { category: MEMORY_CATEGORIES, type: MEMORY_TYPES, level: MEMORY_LEVELS, source: MEMORY_SOURCES } as const;
const FILTER_FIELDS = [...Object.keys(VALUE_FIELDS), 'verified', 'tags', 'metadata', 'ids'];

/**
 * For store authors: check the scope and filter of a read as it arrives
 * (`list`, `listPage`, `count`, `vectorSearch`, `textSearch`), so every store
 * refuses the same shapes before it reads, instead of matching everything or
 * nothing. The scope: absent, or an object with no keys but userId, agentId
 * and sessionId, each a string when set (INVALID_SCOPE). The filter: absent,
 * or an object with `MemoryFilter`'s fields only, each of its type: category,
 * type, level and source one of core's values or an array of them, verified a
 * boolean, tags and ids arrays of strings, metadata an object of strings, finite
 * numbers and booleans (INVALID_INPUT). `exactScope`, when given, a boolean;
 * `orderBy` and `direction` (list), when given, one of their values.
 * Only shapes: lengths and characters are the facade's to limit
 * (`validateScope`), and a store must answer for whatever it holds.
 */
export function assertQueryScope(query: unknown, what: string, backend: string): void {
  if (typeof query !== 'object' || query === null) throw invalidInput(backend, `${what} needs a query object, got ${describeValue(query)}`);
  const { scope, filter, exactScope, orderBy, direction } = query as { scope?: unknown; filter?: unknown; exactScope?: unknown; orderBy?: unknown; direction?: unknown };
  assertScopeShape(scope, what, backend);
  assertFilterShape(filter, what, backend);
  if (exactScope !== undefined && typeof exactScope !== 'boolean') throw invalidInput(backend, `${what}: exactScope must be true or false, got ${describeValue(exactScope)}`);
  if (orderBy !== undefined && !(LIST_ORDERS as readonly unknown[]).includes(orderBy)) {
    throw invalidInput(backend, `${what}: orderBy must be one of ${LIST_ORDERS.join(', ')}, got ${describeValue(orderBy)}`);
  }
  if (direction !== undefined && direction !== 'asc' && direction !== 'desc') throw invalidInput(backend, `${what}: direction must be asc or desc, got ${describeValue(direction)}`);
}

/**
 * For store authors: the scope given to `deleteByScope`, checked as a read's
 * is (INVALID_SCOPE), and refused when it sets no field: a misspelt key, a
 * string, `{ userId: undefined }` or `{}` would otherwise match, and delete,
 * every memory in the store. To empty a store, delete each scope it holds.
 */
export function assertDeleteScope(scope: unknown, backend: string): asserts scope is Scope {
  if (scope === undefined || scope === null) throw invalidScope(backend, `deleteByScope needs a scope such as { userId: "alice" }, got ${describeValue(scope)}`);
  assertScopeShape(scope, 'deleteByScope', backend);
  if (isEmptyScope(scope as Scope)) {
    throw invalidScope(backend, 'deleteByScope needs at least one of userId, agentId or sessionId: an empty scope would delete every memory');
  }
}

/**
 * For store authors: the scope of a record to put, checked as a read's scope
 * is (INVALID_SCOPE naming the memory and the backend), and refused when it is
 * absent or `null` (a memory of no one has `{}`), and, when `creates` (a put
 * with `expectedRevision` 0, the default), when a value is blank (`{ userId: '' }`,
 * `{ userId: ' ' }`: no query could name it, as the facade's `validateScope`
 * refuses it), so every store refuses the same records before writing
 * anything: a store with a column per field would otherwise drop a field it
 * has no column for, and one that keeps records as given would keep a shape no
 * read's scope matches. A memory a store already holds with a blank value
 * (written before the rule, by 0.1.0) may still be rewritten: `creates` false.
 */
export function assertRecordScope(memory: Pick<MemoryRecord, 'id' | 'scope'>, backend: string, creates = true): void {
  const scope: unknown = memory.scope;
  const what = `memory ${memory.id}`;
  if (scope === undefined || scope === null) throw invalidScope(backend, `${what}: scope must be an object like { userId: "alice" } ({} for none), got ${describeValue(scope)}`);
  assertScopeShape(scope, what, backend);
  if (!creates) return;
  for (const [key, value] of Object.entries(scope)) {
    if (typeof value === 'string' && value.trim() === '') throw invalidScope(backend, `${what}: scope.${key} must not be blank, got ${describeValue(value)}`, { field: key });
  }
}

function assertScopeShape(scope: unknown, what: string, backend: string): void {
  for (const [key, value] of scopeEntries(scope, backend, what)) {
    if (value !== undefined && typeof value !== 'string') throw invalidScope(backend, `${what}: scope.${key} must be a string, got ${describeValue(value)}`, { field: key });
  }
}

function assertFilterShape(filter: unknown, what: string, backend: string): void {
  if (filter === undefined || filter === null) return;
  if (typeof filter !== 'object' || Array.isArray(filter)) throw invalidInput(backend, `${what}: filter must be an object like { category: "fact" }, got ${describeValue(filter)}`);
  for (const [key, value] of Object.entries(filter)) {
    if (!FILTER_FIELDS.includes(key)) throw invalidInput(backend, `${what}: unknown filter field "${key}" (expected ${FILTER_FIELDS.join(', ')})`);
    if (value === undefined) continue;
    const refuse = (expected: string) => invalidInput(backend, `${what}: filter.${key} must be ${expected}, got ${describeValue(value)}`);
    if (key in VALUE_FIELDS) {
      const allowed: readonly string[] = VALUE_FIELDS[key as keyof typeof VALUE_FIELDS];
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (!values.every((item) => typeof item === 'string' && allowed.includes(item))) throw refuse(`one of ${allowed.join(', ')}, or an array of them`);
    } else if (key === 'verified') {
      if (typeof value !== 'boolean') throw refuse('true or false');
    } else if (key === 'tags' || key === 'ids') {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw refuse('an array of strings');
    } else {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refuse('an object of strings, numbers and booleans');
      for (const [name, wanted] of Object.entries(value)) {
        const plain = typeof wanted === 'string' || typeof wanted === 'boolean' || (typeof wanted === 'number' && Number.isFinite(wanted));
        if (!plain) throw invalidInput(backend, `${what}: filter.metadata.${name} must be a string, a finite number or a boolean, got ${describeValue(wanted)}`);
      }
    }
  }
}

function invalidScope(backend: string, message: string, details?: Record<string, unknown>): MemloomError {
  return new MemloomError({ code: 'INVALID_SCOPE', backend, message, ...(details ? { details } : {}) });
}

function invalidInput(backend: string, message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend, message });
}
