import { z } from 'zod';
import {
  decayConfigSchema,
  formatZodIssues,
  freshnessConfigSchema,
  limitsConfigSchema,
  FUTURE_AT_TOLERANCE_MS,
  MAX_IMPORTANCE,
  MAX_TIMEOUT_MS,
  recordDefaultsSchema,
  retrievalConfigSchema,
  strategyConfigSchema,
} from './config.js';
import type { Clock } from './contracts.js';
import type { AddResult } from './memory-types.js';
import { isAbortSignal, notASignal } from './abort-signal.js';
import { MemloomError } from './errors.js';
import { policySchema } from './policy.js';
import { MEMORY_CATEGORIES, MEMORY_LEVELS, MEMORY_SOURCES, MEMORY_TYPES, type MemoryCategory, type MemoryFilter } from './types.js';
import { isOnCalendar } from './time-text.js';
import { jsonCopy, jsonDataProblem } from './json-data.js';
import { collidingKey, wellFormed, wellFormedData } from './well-formed.js';


/** The configuration part of `createMemory` options (everything but objects like the store). */
export const engineConfigSchema = z.object({
  strategy: strategyConfigSchema.prefault({}),
  decay: decayConfigSchema.prefault({}),
  /**
   * Seed 000's freshness warnings: off unless configured (SPEC: no config means never warn).
   * `{}` turns them on with the 24 h default; `false` is off too.
   */
  freshness: z.union([z.literal(false), freshnessConfigSchema]).default(false),
  retrieval: retrievalConfigSchema.prefault({}),
  limits: limitsConfigSchema.prefault({}),
  defaults: recordDefaultsSchema.prefault({}),
  /** How long a language model call may take before the deterministic path is used. @default 30000 */
  modelTimeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).default(30_000),
  /** Record lastAccessedAt on memories returned by search (a store that may not write records none, and its results keep the stored times). @default true */
  trackAccess: z.boolean().default(true),
  /**
   * Seed 001's policy from configuration (`retrieve_limit`, `recent_days`, the session thresholds, …): the base
   * layer of every pipeline (`createMemoryPipeline`) and adapter over this memory, under their own `policy`
   * option and the scope's stored overrides. Its `retrieve_limit` is also `retrieval.defaultLimit` when that is
   * not given. @default seed 001's values
   */
  policy: policySchema.strict().prefault({}),
});
export type EngineConfig = z.output<typeof engineConfigSchema>;
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

const timestamp = z.union([z.date(), z.string().min(1), z.number().finite()]);
/** Labels (tags, sources): a lone half of a UTF-16 pair becomes U+FFFD, as in content. */
const stringList = z.array(z.string().min(1).max(512).transform(wellFormed));
/**
 * Metadata is JSON data, what every store keeps exactly (`jsonDataProblem`): anything else is refused, naming
 * the path of the bad value (`metadata.a.list.2: is a Map, …`, as option errors write paths; stores write `metadata.a.list[2]`). Converted on purpose, as JSON would: a Date
 * becomes its ISO 8601 text and a property holding undefined is left out, so every store gives back the same.
 */
const metadataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((metadata, context) => {
    const problem = jsonDataProblem(metadata, { dates: true });
    if (problem) context.addIssue({ code: 'custom', path: problem.path, message: problem.problem });
    const collision = collidingKey(metadata);
    if (collision) context.addIssue({ code: 'custom', message: `metadata${collision}: two keys differ only in a lone half of a UTF-16 pair, which is kept as U+FFFD` });
  })
  // Its strings, keys included, as content's: a lone half of a UTF-16 pair becomes U+FFFD. Then as JSON gives it
  // back (a copy: a later change to the caller's object changes no memory).
  .transform((metadata) => jsonCopy(wellFormedData(metadata)) as Record<string, unknown>);

/**
 * A `MemoryFilter` as `search`, `list`, `count` and `renderIndex` check it (known keys only, known
 * categories, types, levels and sources): for adapters that take a filter as an option, so a bad one
 * is refused when it is given rather than at every later call.
 */
export const memoryFilterSchema = z
  .object({
    category: z.union([z.enum(MEMORY_CATEGORIES), z.array(z.enum(MEMORY_CATEGORIES))]).optional(),
    type: z.union([z.enum(MEMORY_TYPES), z.array(z.enum(MEMORY_TYPES))]).optional(),
    level: z.union([z.enum(MEMORY_LEVELS), z.array(z.enum(MEMORY_LEVELS))]).optional(),
    source: z.union([z.enum(MEMORY_SOURCES), z.array(z.enum(MEMORY_SOURCES))]).optional(),
    verified: z.boolean().optional(),
    tags: stringList.optional(),
    // Made well formed as stored metadata is, so a value with a lone UTF-16 half finds what it stored.
    metadata: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .transform((metadata) => wellFormedData(metadata) as Record<string, string | number | boolean>)
      .optional(),
    // Kept exactly: an id is matched as stored, and one no memory has matches nothing.
    ids: z.array(z.string()).optional(),
  })
  .strict();

/**
 * What adapters recall unless given a `filter` (LangChain's middleware and tools, LlamaIndex's memory
 * blocks): facts, core facts and episodes. `system` is left out: those records are the machinery of the
 * adapters over the same memory (LangChain's chat-history lines, LangGraph store items, working-memory
 * overviews), not memories to show a model. Frozen, its list too: every adapter shares it, so a change
 * made through one of them would change what every other recalls (in strict code it throws instead).
 */
export const DEFAULT_RECALL_FILTER: Readonly<MemoryFilter> = Object.freeze({ category: Object.freeze(['core', 'fact', 'episode']) as MemoryCategory[] });

const signalSchema = z.custom<AbortSignal>(isAbortSignal, { error: (issue) => notASignal(issue.input) });

export const addOptionsSchema = z
  .object({
    scope: z.unknown().optional(),
    category: z.enum(MEMORY_CATEGORIES).optional(),
    type: z.enum(MEMORY_TYPES).optional(),
    importance: z.number().min(0).max(MAX_IMPORTANCE).optional(),
    source: z.enum(MEMORY_SOURCES).optional(),
    verified: z.boolean().optional(),
    sources: stringList.optional(),
    tags: stringList.optional(),
    metadata: metadataSchema.optional(),
    /** When the content was said; defaults to the clock. Used for imports and replays. */
    at: timestamp.optional(),
    trigger: z.enum(['user_mention', 'extraction', 'import']).optional(),
    merge: z.boolean().optional(),
    context: z.string().optional(),
    signal: signalSchema.optional(),
  })
  .strict();
export type ParsedAddOptions = z.output<typeof addOptionsSchema>;

export const addTurnsOptionsSchema = addOptionsSchema
  .omit({ context: true, sources: true })
  .extend({
    contextTurns: z.number().int().min(0).max(20).optional(),
    skip: z.number().int().min(0).optional(),
    onProgress: z.custom<(done: number, total: number, result: AddResult) => unknown>((value) => typeof value === 'function', 'must be a function').optional(),
  })
  .strict();

export const turnSchema = z.union([
  z.string(),
  z
    .object({
      content: z.string(),
      at: timestamp.optional(),
      sources: stringList.optional(),
      tags: stringList.optional(),
      metadata: metadataSchema.optional(),
    })
    .strict(),
]);

export const searchOptionsSchema = z
  .object({
    scope: z.unknown().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    filter: memoryFilterSchema.optional(),
    minScore: z.number().min(0).max(1).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

export const listOptionsSchema = z
  .object({
    scope: z.unknown().optional(),
    filter: memoryFilterSchema.optional(),
    limit: z.number().int().min(1).optional(),
    offset: z.number().int().min(0).optional(),
    orderBy: z.enum(['createdAt', 'updatedAt', 'id', 'stored']).optional(),
    direction: z.enum(['asc', 'desc']).optional(),
    // A whole record may be given: only these fields are kept.
    after: z.object({ id: z.string().min(1), createdAt: z.string().optional(), updatedAt: z.string().optional() }).optional(),
  })
  .strict();

/** `renderIndex` options: checked, and the filter cleaned, as `list`'s are. */
export const renderOptionsSchema = listOptionsSchema.pick({ scope: true, filter: true, limit: true }).strict();

export const updatePatchSchema = z
  .object({
    content: z.string().optional(),
    context: z.string().nullable().optional(),
    category: z.enum(MEMORY_CATEGORIES).optional(),
    type: z.enum(MEMORY_TYPES).optional(),
    level: z.enum(MEMORY_LEVELS).optional(),
    importance: z.number().min(0).max(MAX_IMPORTANCE).optional(),
    weight: z.number().min(0).max(1).optional(),
    verified: z.boolean().optional(),
    sources: stringList.optional(),
    tags: stringList.optional(),
    metadata: metadataSchema.optional(),
  })
  .strict();

/** The history fields `update` lets a caller set, and its signal (the rest of its options are plain values). */
export const updateOptionsSchema = z.object({
  /** For the history entry; as content, a lone half of a UTF-16 pair becomes U+FFFD (Qdrant's server refuses it in JSON). */
  reason: z.string().transform(wellFormed).optional(),
  trigger: z.enum(['manual_edit', 'review', 'extraction']).optional(),
  action: z.enum(['edit', 'boost', 'promote', 'review']).optional(),
  expectedRevision: z.number().int().nonnegative().optional(),
  signal: signalSchema.optional(),
});

export const deleteOptionsSchema = updateOptionsSchema.pick({ expectedRevision: true });

export const restoreOptionsSchema = updateOptionsSchema.pick({ reason: true, signal: true });

/** Parse with a schema; a failure becomes INVALID_OPTIONS (or the given code) naming every bad field. */
export function parseOrThrow<T extends z.ZodType>(
  schema: T,
  value: unknown,
  what: string,
  code: 'INVALID_OPTIONS' | 'INVALID_INPUT' = 'INVALID_OPTIONS',
): z.output<T> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    throw new MemloomError({
      code,
      message: `invalid ${what}: ${formatZodIssues(result.error)}`,
      details: { issues: result.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })) },
    });
  }
  return result.data;
}

/** A Date, ISO string or epoch milliseconds → epoch milliseconds (INVALID_INPUT when unparseable, beyond what a Date holds, or on a day the calendar does not have). */
export function toEpochMs(value: Date | string | number): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  // A Date holds at most ±8.64e15 ms (±100,000,000 days from 1970).
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `not a valid time: ${String(value)}` });
  }
  if (typeof value === 'string' && !isOnCalendar(value)) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `not a day of the calendar: ${value} (a Date would read it as ${new Date(ms).toISOString()})` });
  }
  return ms;
}

/**
 * The `clock` option as core reads it: every `now()` is checked to be epoch milliseconds (a finite number a
 * Date can hold), else INVALID_OPTIONS naming the option. A clock returning a Date or an ISO string would
 * otherwise turn `now + tolerance` into string concatenation and give self-contradictory errors.
 * `option` names where it was given (`createMemory({ clock })`).
 */
export function checkedClock(clock: Clock | undefined, fallback: Clock, option: string): Clock {
  if (clock === undefined) return fallback;
  if (clock === null || typeof clock !== 'object' || typeof (clock as Partial<Clock>).now !== 'function') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `${option}: clock must be an object with a now() method returning epoch milliseconds` });
  }
  return {
    now: () => {
      const value: unknown = clock.now();
      if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 8.64e15) return value;
      const shown = value instanceof Date ? `a Date (${String(value)})` : typeof value === 'number' ? String(value) : `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
      throw new MemloomError({
        code: 'INVALID_OPTIONS',
        message: `${option}: clock.now() returned ${shown}; it must return epoch milliseconds as a finite number (e.g. Date.now() or date.getTime())`,
        details: { option: 'clock' },
      });
    },
  };
}

/**
 * Refuse a time for a new memory (or a turn) later than `nowMs` plus FUTURE_AT_TOLERANCE_MS:
 * INVALID_INPUT naming the time and the latest one accepted. `field` names it in the message (`at`,
 * `turn 3: at`).
 */
export function assertNotFuture(atMs: number, nowMs: number, field = 'at'): void {
  const latestMs = nowMs + FUTURE_AT_TOLERANCE_MS;
  if (atMs <= latestMs) return;
  const at = new Date(atMs).toISOString();
  const latest = new Date(latestMs).toISOString();
  throw new MemloomError({
    code: 'INVALID_INPUT',
    message: `${field} ${at} is in the future: at most ${latest} is accepted (now, ${new Date(nowMs).toISOString()}, plus ${FUTURE_AT_TOLERANCE_MS / 3_600_000} hours); a memory dated later would not decay or compress until then`,
    details: { field, at, latest },
  });
}
