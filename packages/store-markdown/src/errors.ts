import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { MemloomError, readOnlyStoreError, type MemloomErrorCode } from '@memloom/core';

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
 * Run a file operation; a failure that is not a MemloomError yet becomes STORE_ERROR saying what failed
 * (`ioError`; pass `writeError` for a write, to name what is read-only).
 */
export async function guarded<T>(what: string, task: () => Promise<T>, wrap: (error: unknown, what: string) => MemloomError = ioError): Promise<T> {
  try {
    return await task();
  } catch (error) {
    throw wrap(error, what);
  }
}

/**
 * `ioError` for a write. One the system refused for want of permission (EACCES, EROFS, and EPERM but on
 * Windows) names what is read-only as the SQLite store names a file it may not write: STORE_ERROR, the
 * message saying `<path> is read-only for this process`, `details: { path, readonly: true }` (and
 * `details` given). `path` is the file refused, or the folder of one that could not be made, moved or
 * removed in it (for a rename, the folder of the two it could not write).
 */
export function writeError(error: unknown, what: string, more: { advice?: string; details?: Record<string, unknown> } = {}): MemloomError {
  const refused = refusedPath(error);
  if (refused === undefined) return ioError(error, what);
  return readOnlyStoreError({
    backend: BACKEND,
    doing: what,
    what: refused,
    why: ` (its permissions, or a read-only disk): ${(error as Error).message}${more.advice ?? ''}`,
    details: { ...more.details, path: refused },
    cause: error,
  });
}

/**
 * Run `task`, a write made while reading (taking in a hand edit, finishing or undoing an interrupted
 * write): a refusal for want of permission becomes `writeError`'s; anything else (a file that cannot be
 * read, a RetrySignal) is thrown as it is, for the reader to wrap.
 */
export async function writingWhileReading<T>(what: string, task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    throw refusedPath(error) === undefined ? error : writeError(error, what);
  }
}

/**
 * A file operation refused for want of permission: what it named, or that path's folder when the path
 * does not exist (a file or folder it would have made) or is being moved or removed.
 */
export function refusedPath(error: unknown): string | undefined {
  const { code, syscall, path: target, dest } = (error ?? {}) as { code?: unknown; syscall?: unknown; path?: unknown; dest?: unknown };
  // On Windows, EPERM is also a file another program holds open.
  const refused = code === 'EACCES' || code === 'EROFS' || (code === 'EPERM' && process.platform !== 'win32');
  if (!refused || typeof target !== 'string') return undefined;
  // A rename writes the folders it moves between (and a folder moved to another), not the file: its `path`
  // is the source, often memloom's own temp file. A removal writes the folder too.
  if (syscall === 'rename' && typeof dest === 'string') return unwritableFolder(target, dest);
  if (syscall === 'unlink' || syscall === 'rmdir') return path.dirname(target);
  return existsSync(target) ? target : path.dirname(target);
}

/** The folder a rename of `source` to `dest` needs and this process may not write; the destination's when none is found. */
function unwritableFolder(source: string, dest: string): string {
  const needed = [path.dirname(dest), path.dirname(source), ...(isFolder(source) ? [source] : [])];
  return needed.find((folder) => existsSync(folder) && !writable(folder)) ?? path.dirname(dest);
}

function isFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

function writable(target: string): boolean {
  try {
    accessSync(target, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A file changed under a writer's feet; the write starts over from a fresh read. */
export class RetrySignal extends Error {}
