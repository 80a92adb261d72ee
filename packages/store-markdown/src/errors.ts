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

/** A file changed under a writer's feet; the write starts over from a fresh read. */
export class RetrySignal extends Error {}
