import { z } from 'zod';
import { describeValue } from './errors.js';
import { MEMORY_CATEGORIES, MEMORY_TYPES } from './types.js';

/** The highest importance a memory can have. */
export const MAX_IMPORTANCE = 100;

/** The longest timer Node keeps (2^31 - 1 ms); a longer one fires at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * How far after the memory's clock an `at` given for a new memory may lie (clock skew, time zones
 * written wrong): 24 hours. A later one is refused (INVALID_INPUT): a memory dated in the future
 * would neither decay nor compress until that date.
 */
export const FUTURE_AT_TOLERANCE_MS = 24 * 60 * 60 * 1000;

/** `retrieval.contextWeight`'s default: how far a memory's context pulls its stored vector. */
export const DEFAULT_CONTEXT_WEIGHT = 0.7;

const unit = z.number().min(0).max(1);
const positive = z.number().positive();
const nonNegative = z.number().min(0);

/** Seed 004: how new content relates to the most similar memory in its scope. */
export const strategyConfigSchema = z
  .strictObject({
    /** Similarity at or above which new content is merged into the old memory. @default 0.85 */
    highSimilarity: unit.default(0.85),
    /** Similarity at or above which both memories are kept (below it: independent new memory). @default 0.6 */
    mediumSimilarity: unit.default(0.6),
    /** Merge: weight += gap·highBoost, gap = 1 − weight. @default 0.6 */
    highBoost: unit.default(0.6),
    /** Keep both: the old memory's weight += gap·mediumBoost. 0 turns it off. @default 0.3 */
    mediumBoost: unit.default(0.3),
    /** New memory: the nearest old memory's weight += lowBoost (capped at 1). 0 turns it off. @default 0.1 */
    lowBoost: unit.default(0.1),
    /**
     * Similarity a merge must exceed (strictly) to lift a memory one level.
     * Keys are the level the memory is at. @default archive/trace/tag 0.9, summary 0.95
     */
    upgradeAbove: z
      .strictObject({
        archive: unit.default(0.9),
        trace: unit.default(0.9),
        tag: unit.default(0.9),
        summary: unit.default(0.95),
      })
      .prefault({}),
  })
  .refine((value) => value.mediumSimilarity <= value.highSimilarity, {
    message: 'mediumSimilarity must not exceed highSimilarity',
    path: ['mediumSimilarity'],
  });
export type StrategyConfig = z.output<typeof strategyConfigSchema>;
export type StrategyConfigInput = z.input<typeof strategyConfigSchema>;

/** Seeds 004 and 002: passive compression and decay. */
export const decayConfigSchema = z.strictObject({
  /** a in weight = w0 / (1 + a·days). @default 0.01 */
  weightAlpha: nonNegative.default(0.01),
  /**
   * A maintenance pass writes a memory whose only change is its decaying
   * weight once the weight has moved by at least this much since it was last
   * written, so daily passes add a version every few days (or weeks, as
   * decay slows) rather than every day. The weight then lags the formula by
   * less than this; any other change (level, importance, deletion) writes
   * the exact value at once. 0 writes every change. @default 0.02
   */
  minWeightChange: unit.default(0.02),
  /** Age in days (since updatedAt) at which a memory is compressed to each level. */
  compressAfterDays: z
    .strictObject({
      summary: nonNegative.default(7),
      tag: nonNegative.default(30),
      trace: nonNegative.default(90),
      archive: nonNegative.default(180),
    })
    .prefault({}),
  /** Importance at or above which a memory never decays (treated as core). @default 3 */
  neverDecayImportance: positive.default(3),
  /** Episodes: importance ×factor for each `everyDays` of age; deleted at `deleteAfterDays`. */
  episode: z
    .strictObject({
      everyDays: positive.default(7),
      factor: unit.default(0.8),
      deleteAfterDays: positive.default(14),
    })
    .prefault({}),
  /** Facts: importance ×factor for each `everyDays` of age; deleted below `deleteBelowImportance`. */
  fact: z
    .strictObject({
      everyDays: positive.default(7),
      factor: unit.default(0.95),
      deleteBelowImportance: nonNegative.default(0.3),
    })
    .prefault({}),
});
export type DecayConfig = z.output<typeof decayConfigSchema>;
export type DecayConfigInput = z.input<typeof decayConfigSchema>;

/** Seed 000: when a memory is old enough to warn about. Hours; 0 means always warn. */
export const freshnessConfigSchema = z.strictObject({
  /** @default 24 */
  globalThresholdHours: nonNegative.default(24),
  /** Per memory type, e.g. `{ project: 12, user: 168 }`. */
  typeOverrides: z.partialRecord(z.enum(MEMORY_TYPES), nonNegative).default({}),
});
export type FreshnessConfig = z.output<typeof freshnessConfigSchema>;
export type FreshnessConfigInput = z.input<typeof freshnessConfigSchema>;

/** How search ranks: a weighted mean of parts in 0..1, plus the date boost (see README "Retrieval"). */
export const retrievalConfigSchema = z.strictObject({
  weights: z
    .strictObject({
      /** Cosine similarity of query and memory vectors (negative clipped to 0). @default 0.65 */
      semantic: nonNegative.default(0.65),
      /** Keyword (BM25) score, divided by the best in the candidate set. @default 0.3 */
      text: nonNegative.default(0.3),
      /** The memory's weight (decayed, boosted). @default 0.03 */
      weight: nonNegative.default(0.03),
      /**
       * 2^(−days since updatedAt / recencyHalfLifeDays). Small on purpose: a
       * tie-breaker between near-equally relevant memories (a memory from
       * today gains at most 0.02 over a very old one), not a reason to rank a
       * recent unrelated memory above an old relevant one. @default 0.02
       */
      recency: nonNegative.default(0.02),
      /**
       * Added, divided by the sum of the four weights above (so 0.1 with the defaults), to the
       * score of a memory created on the day or in the month the query names (`in May 2023`,
       * `on 3 May, 2023`, `2023-05-03`); the score is clipped to 1. Other memories, and every
       * memory for a query that names no period, keep the score they have without it. @default 0.1
       */
      date: nonNegative.default(0.1),
    })
    .prefault({}),
  /** @default 30 */
  recencyHalfLifeDays: positive.default(30),
  /**
   * How much `add(content, { context })` moves the memory's vector toward its
   * context: vector = normalize(v(content) + contextWeight · v(context)).
   * 0 ignores context. @default 0.7
   */
  contextWeight: nonNegative.default(DEFAULT_CONTEXT_WEIGHT),
  /** Each channel fetches max(limit × candidateMultiplier, minCandidates) candidates. @default 4 */
  candidateMultiplier: positive.default(4),
  /** @default 50 */
  minCandidates: z.number().int().positive().default(50),
  /** @default 10 */
  defaultLimit: z.number().int().positive().default(10),
  /** Results below this score are dropped. @default 0 */
  minScore: nonNegative.default(0),
});
export type RetrievalConfig = z.output<typeof retrievalConfigSchema>;
export type RetrievalConfigInput = z.input<typeof retrievalConfigSchema>;

export const limitsConfigSchema = z.strictObject({
  /** Longest content accepted, in characters. @default 10000 */
  maxContentLength: z.number().int().positive().default(10_000),
  /** Longest scope value, in characters. @default 256 */
  maxScopeLength: z.number().int().positive().default(256),
  /** Most tags on one memory. @default 64 */
  maxTags: z.number().int().positive().default(64),
});
export type LimitsConfig = z.output<typeof limitsConfigSchema>;

export const recordDefaultsSchema = z.strictObject({
  /** 0..100, as `add` takes it. @default 1 */
  importance: nonNegative.max(MAX_IMPORTANCE).default(1),
  /** @default 'fact' */
  category: z.enum(MEMORY_CATEGORIES).default('fact'),
  /** @default 'user' */
  type: z.enum(MEMORY_TYPES).default('user'),
});
export type RecordDefaults = z.output<typeof recordDefaultsSchema>;

/**
 * Zod issues as one line: `path: problem` for each, joined by `; `. A problem of the object itself
 * has no path in front, and a misspelt key is named: `unknown key "vectorMirow"`, or
 * `strategy: unknown key "highSimilarty"` inside a section. A union's bare "Invalid input" is said
 * as explainZodIssues says it.
 */
export function formatZodIssues(error: z.ZodError, prefix = ''): string {
  return explainZodIssues(error.issues)
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
      const problem = issue.code === 'unrecognized_keys' ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}` : issue.message;
      return path ? `${path}: ${problem}` : problem;
    })
    .join('; ');
}

/**
 * A top-level invalid_type issue that zod marked with what the value is (`received: 'NaN'`, `'Infinity'`,
 * `'Invalid Date'`): zod sets the field but leaves it out of its issue types, so it is read through `in`.
 */
function isMarkedInvalidType(issue: z.core.$ZodIssue): issue is z.core.$ZodIssueInvalidType & { received: string } {
  return issue.path.length === 0 && issue.code === 'invalid_type' && 'received' in issue && typeof issue.received === 'string';
}

/**
 * Zod issues with each union's bare "Invalid input" said as the form the value was written in: for an
 * object, what is wrong in it (`store.root` missing, `category.0` not a category, with their paths); for a
 * value of its own kind that kind refuses (NaN or Infinity for a number, an invalid Date), that kind's
 * problem (`Invalid input: expected number, received NaN`); for a value of no accepted kind, the kinds
 * accepted (`Invalid input: expected string or object`), and the value when the issues carry it (parsed
 * with `reportInput: true`: `…, received 5`). Other issues are kept as they are.
 *
 * The forms of another kind (a string, when an object was written) say nothing: zod may add checks that
 * measure the value anyway (z.string().min(1) does an array's length), so a form counts as of another kind
 * when the value is not of its type, or is none of its values.
 */
export function explainZodIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue): z.core.$ZodIssue[] => {
    if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
    const atTop = (code: string) => (inner: z.core.$ZodIssue) => inner.path.length === 0 && inner.code === code;
    const otherKind = (branch: z.core.$ZodIssue[]) => branch.some(atTop('invalid_type')) || branch.every(atTop('invalid_value'));
    const meant = issue.errors.filter((branch) => !otherKind(branch));
    if (meant.length === 1) return explainZodIssues(meant[0]!.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] })));
    if (meant.length > 1) return [issue];
    // A value of a form's own type that the form refuses all the same: zod marks that form's issue with what the value is.
    const ownKind = issue.errors.flat().find(isMarkedInvalidType);
    if (ownKind) return [{ ...ownKind, path: issue.path, message: `Invalid input: expected ${ownKind.expected}, received ${ownKind.received}` }];
    const accepted = issue.errors.flat().map((inner) => (inner.code === 'invalid_type' ? inner.expected : inner.code === 'invalid_value' ? inner.values.map((value) => JSON.stringify(value)).join(' or ') : ''));
    const received = 'input' in issue ? `, received ${describeValue(issue.input)}` : '';
    return [{ ...issue, message: `Invalid input: expected ${[...new Set(accepted.filter(Boolean))].join(' or ')}${received}` }];
  });
}
