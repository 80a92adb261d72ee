/** Half of a UTF-16 pair without its other half. With the `u` flag a whole pair is one code point: only lone halves match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** Whether `text` holds a lone half of a UTF-16 pair (a string cut through an emoji). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * Where to end a cut of `text` at `end` without splitting a UTF-16 pair: `end`, or one less when
 * the character before it is the first half of a pair (an emoji cut through its middle), so that
 * `text.slice(start, pairSafeEnd(text, end))` never ends on half a character.
 */
export function pairSafeEnd(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * The last `max` characters of `text` (all of a shorter one), never starting on the second half of a
 * UTF-16 pair (an emoji cut through its middle): such a cut starts one character later.
 */
export function lastCharacters(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = text.length - max;
  const first = text.charCodeAt(start);
  const before = text.charCodeAt(start - 1);
  const inPair = first >= 0xdc00 && first <= 0xdfff && before >= 0xd800 && before <= 0xdbff;
  return text.slice(inPair ? start + 1 : start);
}

/**
 * The first `max` characters of `text` and "…" (all of a shorter one), for a message to quote: never ending on
 * the first half of a UTF-16 pair (an emoji cut through its middle), which would show as U+FFFD or make the
 * message's JSON hold a lone half.
 */
export function excerpt(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, pairSafeEnd(text, max))}…` : text;
}

/**
 * `text` with each lone half of a UTF-16 pair replaced by U+FFFD, as UTF-8 would show it: what
 * every store can keep as given (Qdrant's server refuses such JSON; SQLite and files turn it into
 * U+FFFD on the way).
 */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}

/**
 * Plain data (metadata) with every string, keys included, well formed. Arrays and plain objects
 * holding a lone half are copied; everything else (other objects, data deeper than 64 levels, data
 * with nothing to replace) is given back as it is.
 */
export function wellFormedData(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return wellFormed(value);
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    const copy = value.map((item: unknown) => wellFormedData(item, depth + 1));
    return copy.some((item, index) => item !== value[index]) ? copy : value;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const original = Object.entries(value);
  const entries = original.map(([key, child]) => [wellFormed(key), wellFormedData(child, depth + 1)] as const);
  const changed = entries.some(([key, child], index) => key !== original[index]![0] || child !== original[index]![1]);
  return changed ? Object.fromEntries(entries) : value;
}

/**
 * Where two keys of one object in plain data would become the same once made well formed
 * (`k\uD83D` and `k\uFFFD`): the path to them, such as `.a.b`; undefined when none would.
 */
export function collidingKey(value: unknown, depth = 0): string | undefined {
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const inner = collidingKey(item, depth + 1);
      if (inner !== undefined) return `[${index}]${inner}`;
    }
    return undefined;
  }
  const seen = new Set<string>();
  for (const [key, child] of Object.entries(value)) {
    const shown = wellFormed(key);
    if (seen.has(shown)) return `.${shown}`;
    seen.add(shown);
    const inner = collidingKey(child, depth + 1);
    if (inner !== undefined) return `.${key}${inner}`;
  }
  return undefined;
}

/**
 * Where a string in plain data, or a key, holds a lone half of a UTF-16 pair: the keys and indexes from
 * `value` down to it (`['metadata', 'note']`, `['tags', 0]`; empty for `value` itself); undefined when none
 * does. For a store that sends data as UTF-8 JSON (Qdrant's server refuses such JSON) to refuse it first.
 * Walks arrays and objects' own enumerable keys, as JSON does, to 256 levels; a cycle is not followed.
 */
export function loneSurrogatePath(value: unknown): (string | number)[] | undefined {
  return loneSurrogateIn(value, [], new Set());
}

function loneSurrogateIn(value: unknown, path: (string | number)[], ancestors: Set<object>): (string | number)[] | undefined {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? path : undefined;
  if (typeof value !== 'object' || value === null || ancestors.has(value) || path.length > 256) return undefined;
  ancestors.add(value);
  try {
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item: unknown, index) => [index, item]) : Object.entries(value);
    for (const [step, child] of entries) {
      if (typeof step === 'string' && hasLoneSurrogate(step)) return [...path, step];
      const found = loneSurrogateIn(child, [...path, step], ancestors);
      if (found) return found;
    }
    return undefined;
  } finally {
    ancestors.delete(value);
  }
}
