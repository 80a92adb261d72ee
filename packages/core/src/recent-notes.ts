import { DAY_MS } from './decay.js';
import { describeValue, MemloomError } from './errors.js';
import type { Memory } from './memory-types.js';
import { policySchema } from './policy.js';
import type { MemoryFilter, MemoryRecord, Scope } from './types.js';

/** Most daily notes `recentNotes` returns unless told otherwise: three busy days, and a bound on the prompt. */
export const MAX_RECENT_NOTES = 50;

export interface RecentNotesOptions {
  scope?: Scope;
  /** How many days back, today included (seed 001's `recent_days`); 0 gives none. */
  days: number;
  /** Only notes that also pass this filter: one whose categories leave out `episode` gives none. */
  filter?: MemoryFilter;
  /** Most notes returned, the newest kept. @default {@link MAX_RECENT_NOTES} */
  limit?: number;
}

/**
 * Seed 001's daily notes of the last `days` days, newest first. A daily note is an `episode`: what
 * the Markdown store writes to `memory/YYYYMM/YYYYMMDD.md`, LangChain's `memory_append` slot "today"
 * and a session summary. "The last 3 days" are today and the two calendar days (UTC, as the daily
 * files are named) before it, on the memory's clock, read from `updatedAt`: a note restated on a later
 * day merges into the earlier one and is that day's note.
 */
export async function recentNotes(memory: Pick<Memory, 'list' | 'clock'>, options: RecentNotesOptions): Promise<MemoryRecord[]> {
  const { days, filter, limit = MAX_RECENT_NOTES } = options;
  if (!policySchema.shape.recent_days.safeParse(days).success) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `recent notes: days must be a whole number from 0 to 90 (recent_days), got ${describeValue(days)}` });
  }
  if (!(Number.isInteger(limit) && limit > 0)) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `recent notes: limit must be a whole number above 0, got ${describeValue(limit)}` });
  }
  const categories = filter?.category === undefined ? undefined : [filter.category].flat();
  if (days === 0 || (categories && !categories.includes('episode'))) return [];
  const since = new Date(memory.clock.now() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
  const notes = await memory.list({
    ...(options.scope ? { scope: options.scope } : {}),
    filter: { ...filter, category: 'episode' },
    orderBy: 'updatedAt',
    direction: 'desc',
    limit,
  });
  return notes.filter((note) => note.updatedAt.slice(0, 10) >= since);
}
