import { excerpt } from './well-formed.js';

/**
 * Stable error codes. A code never changes meaning once published; callers
 * branch on `error.code`, never on the message text.
 */
export type MemloomErrorCode =
  /** Options passed to a factory or method failed validation. */
  | 'INVALID_OPTIONS'
  /** Content that is empty or only whitespace. */
  | 'EMPTY_CONTENT'
  /** Content longer than the configured `limits.maxContentLength`. */
  | 'CONTENT_TOO_LONG'
  /** A scope value (userId, agentId, sessionId) that is missing, empty, too long or holds a control character or a bidi control. */
  | 'INVALID_SCOPE'
  /** Any other input that is not of the expected shape. */
  | 'INVALID_INPUT'
  /** No memory with that id (in that scope). */
  | 'NOT_FOUND'
  /** No version with that number in a memory's history. */
  | 'VERSION_NOT_FOUND'
  /** An embedder returned a vector of the wrong dimension, or holding NaN / Infinity. */
  | 'INVALID_EMBEDDING'
  /** A vector's dimension differs from the one the store was created with. */
  | 'DIMENSION_MISMATCH'
  /** The store was indexed by another embedder; a re-index is needed. */
  | 'EMBEDDER_MISMATCH'
  /** Someone else changed the memory between read and write (optimistic concurrency). */
  | 'CONFLICT'
  /** The store failed to read or write. */
  | 'STORE_ERROR'
  /** The store's files are damaged or are not what the store expects. */
  | 'STORE_CORRUPT'
  /** The store was written by a newer memloom schema than this version understands. */
  | 'SCHEMA_TOO_NEW'
  /** A store, embedder or model lacks an optional capability that was asked for. */
  | 'NOT_SUPPORTED'
  /** The embedder failed. */
  | 'EMBEDDER_ERROR'
  /** A language model call failed or returned something unusable. */
  | 'MODEL_ERROR'
  /** An operation took longer than its configured timeout. */
  | 'TIMEOUT'
  /** The memory (or store) was closed. */
  | 'CLOSED'
  /** A file or resource that must exist is missing (model files, config file, store package). */
  | 'MISSING_RESOURCE'
  /** Configuration file or environment could not be used. */
  | 'INVALID_CONFIG';

const MARKER = Symbol.for('memloom.error');

export interface MemloomErrorOptions {
  code: MemloomErrorCode;
  message: string;
  /** Which backend or component raised it: `sqlite`, `markdown`, `qdrant`, `embeddings`, `core`, … */
  backend?: string;
  cause?: unknown;
  /** Structured facts for programs (field names, paths, ids). */
  details?: Record<string, unknown>;
}

/**
 * The one error type memloom throws. The message reads
 * `[memloom] [backend] what went wrong`.
 */
export class MemloomError extends Error {
  readonly code: MemloomErrorCode;
  readonly backend: string;
  readonly details: Record<string, unknown>;
  /** What went wrong, without the `[memloom] [backend]` prefix: to quote inside another message. */
  readonly reason: string;
  private readonly [MARKER] = true;

  constructor(options: MemloomErrorOptions) {
    const backend = options.backend ?? 'core';
    super(`[memloom] [${backend}] ${options.message}`, { cause: options.cause });
    this.name = 'MemloomError';
    this.code = options.code;
    this.backend = backend;
    this.details = options.details ?? {};
    this.reason = options.message;
  }

  /** True for a MemloomError, even one thrown by another copy of this package. */
  static isInstance(value: unknown): value is MemloomError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** True when `value` is a MemloomError with this code. */
  static hasCode(value: unknown, code: MemloomErrorCode): value is MemloomError {
    return MemloomError.isInstance(value) && value.code === code;
  }
}

/**
 * A value as an error message shows what it was given: a number, boolean, null or undefined as itself, a
 * string as JSON (its `excerpt`), anything else by its kind (`an array`, `an object`, `a function`).
 */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(excerpt(value));
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Wrap an unknown failure in a MemloomError, keeping one that already is. */
export function toMemloomError(
  error: unknown,
  fallback: Omit<MemloomErrorOptions, 'cause' | 'message'> & { message?: string },
): MemloomError {
  if (MemloomError.isInstance(error)) return error;
  const text = error instanceof Error ? error.message : String(error);
  return new MemloomError({
    ...fallback,
    message: fallback.message ? `${fallback.message}: ${text}` : text,
    cause: error,
  });
}

/**
 * STORE_ERROR for a write a store may not make (a file or folder this process may not write, a read-only
 * disk, an API key that may only read): "`doing`: `what` is read-only for this process`why`", with
 * `readonly: true` added to `details`, so a caller tells it from other failures by `details.readonly`
 * alone (see `MemoryStore`). `why` follows as it is given: lead it with its punctuation, such as
 * " (its permissions, or a read-only disk)". The SQLite and Markdown stores use it; Qdrant's 403 on a write
 * carries `readonly: true` in its own request error.
 */
export function readOnlyStoreError(options: { backend: string; doing: string; what: string; why: string; details?: Record<string, unknown>; cause?: unknown }): MemloomError {
  return new MemloomError({
    code: 'STORE_ERROR',
    backend: options.backend,
    message: `${options.doing}: ${options.what} is read-only for this process${options.why}`,
    cause: options.cause,
    details: { ...options.details, readonly: true },
  });
}

/**
 * MISSING_RESOURCE from a store opened with `mustExist` that finds no store: "no store `where`:
 * `what`, and nothing was created (mustExist). Check `check`, or create the store by opening it
 * without mustExist", with `mustExist: true` added to `details`. One wording for every backend.
 */
export function missingStoreError(options: { backend: string; where: string; what: string; check: string; details: Record<string, unknown>; cause?: unknown }): MemloomError {
  return new MemloomError({
    code: 'MISSING_RESOURCE',
    backend: options.backend,
    message: `no store ${options.where}: ${options.what}, and nothing was created (mustExist). Check ${options.check}, or create the store by opening it without mustExist`,
    cause: options.cause,
    details: { ...options.details, mustExist: true },
  });
}
