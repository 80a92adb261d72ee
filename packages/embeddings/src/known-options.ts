import { describeValue, MemloomError } from '@memloom/core';

/**
 * Refuse option keys a factory does not know: a misspelt one (`cacheEntrys`)
 * would otherwise be ignored and its default used without a word. Callers
 * write `known` as `{ …: true } satisfies Record<keyof Options, true>`, so
 * the compiler keeps the list in step with the options type. `path` names a
 * nested object's keys (`lexical.`).
 */
export function assertKnownOptions(options: object, known: Readonly<Record<string, true>>, factory: string, path = ''): void {
  const unknown = Object.keys(options).filter((key) => !Object.hasOwn(known, key));
  if (unknown.length === 0) return;
  throw new MemloomError({
    code: 'INVALID_OPTIONS',
    backend: 'embeddings',
    message: `${factory}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(path + key)).join(', ')} (known: ${Object.keys(known).join(', ')})`,
  });
}

/**
 * A value for an error message, as core's `describeValue` shows it (strings quoted, so `"5"` is not
 * mistaken for 5; a function as `a function`, not its source), but an object by its keys: what was
 * given in place of an object with methods (`{ get, set }`).
 */
export function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return `{ ${Object.keys(value).join(', ')} }`.replace('{  }', '{}');
  return describeValue(value);
}
