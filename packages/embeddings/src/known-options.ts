import { MemloomError } from '@memloom/core';

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

/** A value for an error message: strings quoted, so `"5"` is not mistaken for 5; an object by its keys. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return `{ ${Object.keys(value).join(', ')} }`.replace('{  }', '{}');
  return String(value);
}
