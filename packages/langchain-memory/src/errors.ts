import { formatZodIssues, MemloomError, memoryFilterSchema, type MemoryFilter } from '@memloom/core';

/** How many `cause` links to follow before giving up (a guard against cycles). */
const MAX_CAUSES = 10;

/**
 * The `MemloomError` behind an error, if there is one: the error itself or the
 * first along its `cause` chain. Through `agent.invoke` LangChain wraps what
 * a middleware throws in its own `MiddlewareError`, keeping ours as `cause`.
 */
export function memloomErrorOf(error: unknown): MemloomError | undefined {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined && current !== null; depth++) {
    if (MemloomError.isInstance(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Run a write to one memory; NOT_FOUND (another writer removed it first) is taken as done. */
export async function unlessGone(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!MemloomError.hasCode(error, 'NOT_FOUND')) throw error;
  }
}

/**
 * Once the run is aborted, the abort is what LangChain gets, whatever failed meanwhile: throw the
 * signal's reason (else `error`). Does nothing while the run goes on.
 */
export function throwIfRunAborted(signal: AbortSignal | undefined, error: unknown): void {
  if (signal?.aborted) throw signal.reason ?? error;
}

/** A bad option of this adapter: INVALID_OPTIONS, named as the LangChain adapter's. */
export function invalidOptions(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'langchain', message });
}

/**
 * A `filter` option, checked as core's `search` checks it, so a misspelt key or an unknown category is
 * refused when the middleware or tool is made rather than failing every later search; else `fallback`.
 */
export function checkedFilter(filter: MemoryFilter | undefined, fallback: MemoryFilter, where: string): MemoryFilter {
  if (filter === undefined) return fallback;
  const result = memoryFilterSchema.safeParse(filter);
  if (!result.success) throw invalidOptions(`${where}: invalid filter: ${formatZodIssues(result.error)}`);
  return filter;
}
