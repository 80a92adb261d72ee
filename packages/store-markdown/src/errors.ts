import { existsSync } from 'node:fs';
import path from 'node:path';
import { MemloomError, type MemloomErrorCode } from '@memloom/core';

/** Backend name used in every error this package raises. */
export const BACKEND = 'markdown';

/** A MemloomError naming the markdown backend. */
export function storeError(code: MemloomErrorCode, message: string, details?: Record<string, unknown>, cause?: unknown): MemloomError {
  return new MemloomError({ code, backend: BACKEND, message, ...(details ? { details } : {}), ...(cause !== undefined ? { cause } : {}) });
}

/** Wrap a failed file operation as STORE_ERROR, keeping MemloomErrors as they are. */
export function ioError(error: unknown, what: string): MemloomError {
  if (MemloomError.isInstance(error)) return error;
  const text = error instanceof Error ? error.message : String(error);
  return storeError('STORE_ERROR', `${what}: ${text}`, undefined, error);
}

/**
 * `ioError` for a write. One the system refused for want of permission (EACCES, EPERM, EROFS) names
 * what is read-only as the SQLite store names a file it may not write: STORE_ERROR, the message
 * saying `<path> is read-only for this process`, `details: { path, readonly: true }` (and `details`
 * given). `path` is the file refused, or the folder of one that could not be made in it.
 */
export function writeError(error: unknown, what: string, more: { advice?: string; details?: Record<string, unknown> } = {}): MemloomError {
  const refused = refusedPath(error);
  if (refused === undefined || MemloomError.isInstance(error)) return ioError(error, what);
  return storeError(
    'STORE_ERROR',
    `${what}: ${refused} is read-only for this process (its permissions, or a read-only disk): ${(error as Error).message}${more.advice ?? ''}`,
    { ...more.details, path: refused, readonly: true },
    error,
  );
}

/** A file operation refused for want of permission: what it named, or that path's folder when the path does not exist (a file or folder it would have made). */
function refusedPath(error: unknown): string | undefined {
  const { code, path: target } = (error ?? {}) as { code?: unknown; path?: unknown };
  if ((code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') || typeof target !== 'string') return undefined;
  return existsSync(target) ? target : path.dirname(target);
}

/** A file changed under a writer's feet; the write starts over from a fresh read. */
export class RetrySignal extends Error {}
