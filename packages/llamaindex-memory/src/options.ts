import { DEFAULT_RECALL_FILTER, formatZodIssues, isEmptyScope, MemloomError, memoryFilterSchema, validateScope, type Logger, type Memory, type Scope } from '@memloom/core';
import { z } from 'zod';

/** Validate block options with a zod schema; a failure is INVALID_OPTIONS naming every bad field. */
export function parseOptions<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  if (typeof value !== 'object' || value === null) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'llamaindex', message: `${what} needs an options object` });
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'llamaindex',
      message: `invalid ${what} options: ${formatZodIssues(result.error)}`,
      details: { issues: result.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })) },
    });
  }
  return result.data;
}

/** A memloom `Memory` (from `memloom` or `@memloom/core`): checked by shape so copies of core interoperate. */
export const memorySchema = z.custom<Memory>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['add', 'search', 'renderIndex'].every((name) => typeof (value as Record<string, unknown>)[name] === 'function'),
  { message: 'must be a memloom Memory (from createMemory)' },
);

export const loggerSchema = z.custom<Logger>(
  (value) => typeof value === 'object' && value !== null && ['warn', 'debug'].every((name) => {
    const method = (value as Record<string, unknown>)[name];
    return method === undefined || typeof method === 'function';
  }),
  { message: 'must be an object with optional warn(message, details) and debug(message, details) methods' },
);

/**
 * A block's `filter` option, checked as core's `search` and `renderIndex` check it (a misspelt key or an
 * unknown category is refused here, not at every prompt), defaulting to core's {@link DEFAULT_RECALL_FILTER}
 * (facts, core facts and episodes, not `system` records).
 */
export const filterSchema = memoryFilterSchema.default(DEFAULT_RECALL_FILTER);

export const blockIdSchema = z.string().trim().min(1).max(200);
export const prioritySchema = z.number().int().min(0);
export const tokenLimitSchema = z.number().int().positive();

/**
 * The scope a block reads and writes. It must name someone (userId, agentId
 * or sessionId): a block without one would mix every user's memories.
 */
export function requireScope(scope: unknown, what: string): Scope {
  const clean = validateScope(scope, undefined, 'llamaindex');
  if (isEmptyScope(clean)) {
    throw new MemloomError({
      code: 'INVALID_SCOPE',
      backend: 'llamaindex',
      message: `${what} needs a scope with at least one of userId, agentId or sessionId, e.g. { userId: 'alice' }`,
    });
  }
  return clean;
}

/** Warnings go to the console unless a logger is given, prefixed like every memloom message. */
export const consoleLogger: Logger = {
  warn: (message, details) => console.warn(`[memloom] [llamaindex] ${message}`, ...(details ? [details] : [])),
};

/** The one-line reason of any failure, for logs. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
