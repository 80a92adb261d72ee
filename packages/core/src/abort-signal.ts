import { MemloomError } from './errors.js';

/**
 * Whether a value can be used as an `AbortSignal`. Duck-typed, so that a
 * signal from another realm or an AbortController polyfill counts too.
 */
export function isAbortSignal(value: unknown): value is AbortSignal {
  const candidate = value as Partial<AbortSignal> | null | undefined;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.aborted === 'boolean' &&
    typeof candidate.addEventListener === 'function' &&
    typeof candidate.removeEventListener === 'function' &&
    typeof candidate.throwIfAborted === 'function'
  );
}

/** What is wrong with a `signal` option that is not an AbortSignal: written once, for `checkedSignal` and the options schemas. */
export function notASignal(value: unknown): string {
  return `must be an AbortSignal, not ${value === null ? 'null' : typeof value}`;
}

/** A `signal` option checked at the edge: undefined, or an AbortSignal (INVALID_OPTIONS otherwise, naming the call). */
export function checkedSignal(value: unknown, what: string): AbortSignal | undefined {
  if (value === undefined || isAbortSignal(value)) return value;
  throw new MemloomError({ code: 'INVALID_OPTIONS', message: `${what}: signal ${notASignal(value)}` });
}

/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts (at once when it
 * already has): for a caller that must stop waiting on work it cannot stop itself (work shared
 * with other callers, a model call that ignores its signal).
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  // A signal without a reason (a polyfill) still rejects with an error.
  const reason = () => signal.reason ?? new Error('aborted');
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
