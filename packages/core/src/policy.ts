import { z } from 'zod';
import { formatZodIssues } from './config.js';
import { MemloomError } from './errors.js';
import type { Scope } from './types.js';

/**
 * Seed 001's memory policy. Keys keep the seed's snake_case because they are
 * also a file format (`memory/policy_overrides.json`) that models write.
 */
export const policySchema = z.object({
  /** Memory blocks returned for a query. @default 10 */
  retrieve_limit: z.number().int().min(1).max(100).default(10),
  /** Days of daily notes added to the context. @default 3 */
  recent_days: z.number().int().min(0).max(90).default(3),
  /** Summarize the session past this many messages. @default 20 */
  session_summary_message_threshold: z.number().int().min(2).max(1000).default(20),
  /** …or past this share of the context window, in percent. @default 75 */
  session_summary_token_percent: z.number().min(1).max(100).default(75),
  /** Messages kept verbatim after a summary. @default 4 */
  session_summary_keep_count: z.number().int().min(0).max(100).default(4),
  /** Relevant past turns injected per query; 0 turns it off. @default 0 */
  session_relevant_history_limit: z.number().int().min(0).max(100).default(0),
  /** Recent messages kept when no past turn is relevant. @default 8 */
  session_relevant_fallback_keep: z.number().int().min(0).max(100).default(8),
  /** Compress the long-term memory past this many characters; 0 turns it off. @default 0 */
  long_term_compress_char_threshold: z.number().int().min(0).max(10_000_000).default(0),
  /** Reflect on the conversation and tune this policy every ~20 messages. @default false */
  evolution_enabled: z.boolean().default(false),
});
export type Policy = z.output<typeof policySchema>;
export type PolicyKey = keyof Policy;

type PolicyShape = typeof policySchema.shape;

/**
 * Overrides: any subset of the policy, nothing else. Built from the fields
 * without their defaults: zod 4's `.partial()` would still fill every
 * missing key with its default, so one overrides layer would reset every
 * value the configuration set.
 */
export const policyOverridesSchema = z
  .object(
    Object.fromEntries(Object.entries(policySchema.shape).map(([key, field]) => [key, field.unwrap().optional()])) as {
      [K in keyof PolicyShape]: z.ZodOptional<ReturnType<PolicyShape[K]['unwrap']>>;
    },
  )
  .strict();
export type PolicyOverrides = z.output<typeof policyOverridesSchema>;

export const DEFAULT_POLICY: Policy = policySchema.parse({});

/**
 * Where a policy's overrides live between processes (seed 001:
 * `memory/policy_overrides.json` with `memory/policy_snapshots/`).
 */
export interface PolicyStorage {
  /** The current overrides, or undefined when there are none (deleting them rolls back). */
  readOverrides(): Promise<unknown>;
  /** Snapshot the current overrides (if any), then replace them atomically. */
  writeOverrides(overrides: PolicyOverrides, at: Date): Promise<void>;
  /**
   * When the long-term memory of this scope was last compressed (seed 001's
   * `memory/.last_longterm_compress`), or undefined when never. Optional: a
   * storage without it makes the once-a-day limit last only as long as the process.
   */
  readLastCompression?(scope: Scope): Promise<Date | undefined>;
  /** Record a long-term compression of this scope. Optional, see `readLastCompression`. */
  writeLastCompression?(scope: Scope, at: Date): Promise<void>;
}

/**
 * Resolve the policy: defaults, then the configuration, then the workspace
 * overrides (seed 001's order). Each layer is validated; a bad field fails
 * with INVALID_CONFIG naming the field and where it came from.
 */
export function resolvePolicy(layers: Array<{ source: string; values: unknown }>): Policy {
  let policy: Policy = { ...DEFAULT_POLICY };
  for (const layer of layers) {
    if (layer.values === undefined || layer.values === null) continue;
    const parsed = policyOverridesSchema.safeParse(layer.values);
    if (!parsed.success) {
      throw new MemloomError({
        code: 'INVALID_CONFIG',
        message: `invalid memory policy in ${layer.source}: ${formatZodIssues(parsed.error)}`,
        details: { source: layer.source },
      });
    }
    policy = { ...policy, ...stripUndefined(parsed.data) };
  }
  return policy;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
