/**
 * A version's `before` record, kept as a patch against its `after` record
 * (schema 2). A change touches a few fields, so the patch holds those and
 * the version row about half of what two whole records took.
 *
 * The patch is the JSON array `[set]` or `[set, unset]`: `set` holds each
 * field whose JSON differs from `after`'s, `unset` names the fields `after`
 * has and `before` has not. Applied to `JSON.parse(after_json)` it gives
 * exactly `JSON.parse(JSON.stringify(before))`, which is what schema 1 kept.
 */

/** The patch for `before`, or undefined when `before` is not a plain record and is kept whole. */
export function beforePatch(before: object, after: object): string | undefined {
  if (!isPlainObject(before) || !isPlainObject(after)) return undefined;
  const fields = before as Record<string, unknown>;
  const others = after as Record<string, unknown>;
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const other = others[key];
    if (value === other) continue;
    // Only objects need their JSON compared; a primitive that differs goes into the patch as it is.
    const json = typeof value === 'object' && value !== null ? jsonOf(value) : isOmitted(value) ? undefined : '';
    if (json === undefined) {
      if (jsonOf(other) !== undefined) unset.push(key);
    } else if (json === '' || typeof other !== 'object' || other === null || json !== jsonOf(other)) {
      // defineProperty: a field named __proto__ stays a field, as JSON.parse makes it.
      if (key === '__proto__') Object.defineProperty(set, key, { value, writable: true, enumerable: true, configurable: true });
      else set[key] = value;
    }
  }
  for (const key of Object.keys(others)) {
    if (!Object.prototype.hasOwnProperty.call(fields, key) && jsonOf(others[key]) !== undefined) unset.push(key);
  }
  return JSON.stringify(unset.length > 0 ? [set, unset] : [set]);
}

/** `before` from the stored `after` JSON and the patch; throws on a patch of the wrong shape. */
export function applyBeforePatch(afterJson: string, patch: string): Record<string, unknown> {
  const base = JSON.parse(afterJson) as unknown;
  const parsed = JSON.parse(patch) as unknown;
  if (!isPlainObject(base) || !Array.isArray(parsed) || !isPlainObject(parsed[0]) || (parsed.length > 1 && !Array.isArray(parsed[1]))) {
    throw new SyntaxError('not a version patch');
  }
  const before = base as Record<string, unknown>;
  for (const key of (parsed[1] as unknown[] | undefined) ?? []) delete before[String(key)];
  for (const [key, value] of Object.entries(parsed[0] as Record<string, unknown>)) {
    Object.defineProperty(before, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return before;
}

/** The JSON of a field value, undefined when JSON.stringify leaves the field out. */
function jsonOf(value: unknown): string | undefined {
  return isOmitted(value) ? undefined : (JSON.stringify(value) as string | undefined);
}

function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** Records from core are plain objects; anything with a prototype or toJSON of its own is kept whole. */
function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
