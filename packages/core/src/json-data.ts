/** How deep metadata given to `Memory` may nest. Deeper data is refused, so no walk over it (ours, JSON's) can overflow the stack. */
export const MAX_DATA_DEPTH = 64;

/**
 * How deep a store lets metadata nest: far past MAX_DATA_DEPTH, only a guard for the stack. Core nests
 * given metadata deeper itself (long-term compression keeps an absorbed memory's metadata three levels
 * down), and memories stored before the facade checked depth may hold more: a store must still write them.
 */
export const MAX_STORED_DATA_DEPTH = 1000;

/** Where a value is not JSON data, and why. */
export interface DataProblem {
  /** Keys and array indexes from the value checked down to the bad one (`['a', 'list', 2]`); empty for the value itself. */
  path: (string | number)[];
  /** What is wrong with it, to follow its path: `is a Map, …`. */
  problem: string;
}

/**
 * The first place, depth first, where `value` is not JSON data: what every store keeps exactly (SQLite and
 * Markdown write metadata as JSON text, Qdrant sends it as JSON; only the in-memory store could keep more).
 * JSON data is null, booleans, strings, finite numbers, arrays of JSON data (no empty slot, no `undefined`)
 * and plain objects (of `Object.prototype` or none) whose values are JSON data, nested at most
 * `maxDepth` (MAX_DATA_DEPTH) levels, without a cycle. A property whose value is `undefined` counts as absent, as JSON
 * and core's options take it. `dates: true` lets a valid Date through (for a caller that turns it into its
 * ISO 8601 text, as JSON does); otherwise a Date is refused like any other object of a class.
 */
export function jsonDataProblem(value: unknown, options: { dates?: boolean; maxDepth?: number } = {}): DataProblem | undefined {
  return problemIn(value, [], new Set(), options.dates === true, options.maxDepth ?? MAX_DATA_DEPTH);
}

/**
 * JSON data as a store that writes JSON (SQLite's columns, Markdown's files, Qdrant's payloads) gives it
 * back: a copy, with -0 as 0 and a property holding `undefined` left out. For a store that keeps records in
 * process, so that what it gives back is what the others give.
 */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A path as a message shows it: `metadata.a.list[2]`. */
export function dataPath(root: string, path: readonly (string | number)[]): string {
  return path.reduce<string>((shown, step) => (typeof step === 'number' ? `${shown}[${step}]` : `${shown}.${step}`), root);
}

function problemIn(value: unknown, path: (string | number)[], ancestors: Set<object>, dates: boolean, maxDepth: number): DataProblem | undefined {
  const refuse = (problem: string): DataProblem => ({ path: [...path], problem });
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : refuse(`is ${String(value)}, which JSON cannot hold (it would be stored as null)`);
    case 'undefined':
      // Only reached for an array's item: an object's undefined property is skipped below.
      return refuse('is undefined, which JSON cannot hold in an array (it would be stored as null)');
    case 'bigint':
    case 'function':
    case 'symbol':
      return refuse(`is a ${typeof value}, which JSON cannot hold`);
  }
  if (value === null) return undefined;
  const object = value as object;
  if (ancestors.has(object)) return refuse('refers back to an object that holds it (a cycle), which JSON cannot hold');
  if (path.length >= maxDepth) return refuse(`nests deeper than ${maxDepth} levels`);
  if (object instanceof Date) {
    if (!dates) return refuse('is a Date, which JSON would store as text: give its toISOString() instead');
    return Number.isNaN(object.getTime()) ? refuse('is an invalid Date, which JSON would store as null') : undefined;
  }
  const isArray = Array.isArray(object);
  const prototype = Object.getPrototypeOf(object) as unknown;
  if (!isArray && prototype !== Object.prototype && prototype !== null) {
    return refuse(`is a ${kindOf(object)}, not plain data (objects, arrays, strings, finite numbers, booleans and null), which JSON cannot keep as it is`);
  }
  ancestors.add(object);
  try {
    if (isArray) {
      const array = object as unknown[];
      for (let index = 0; index < array.length; index++) {
        if (!(index in array)) return { path: [...path, index], problem: 'is an empty slot of an array, which JSON would store as null' };
        const problem = problemIn(array[index], [...path, index], ancestors, dates, maxDepth);
        if (problem) return problem;
      }
      return undefined;
    }
    for (const [key, child] of Object.entries(object)) {
      if (child === undefined) continue;
      const problem = problemIn(child, [...path, key], ancestors, dates, maxDepth);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    ancestors.delete(object);
  }
}

/** `Map`, `Set`, `Uint8Array`, or a class's name. */
function kindOf(object: object): string {
  const name = (object.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' ? name : Object.prototype.toString.call(object).slice(8, -1);
}
