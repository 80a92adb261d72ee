import { z } from 'zod';
import { MAX_TIMEOUT_MS } from '../config.js';

const nonNegative = z.number().min(0);
const positiveInteger = z.number().int().positive();

/**
 * The pipeline's own numbers (seed 002's review thresholds, limits on model
 * output). Seed 001's policy numbers (summary thresholds, compression,
 * evolution) come from the `Policy` instead, so they can evolve.
 */
export const pipelineConfigSchema = z.object({
  /** Seed 002: importance added by a BOOST, when a memory really shaped the reply. @default 0.3 */
  boostAmount: nonNegative.default(0.3),
  /** Seed 002: a fact whose importance reaches this is reviewed for promotion to core. @default 2.5 */
  promoteAtImportance: nonNegative.default(2.5),
  /** Seed 002: a fact whose importance falls below this is reviewed for deletion. @default 0.5 */
  reviewBelowImportance: nonNegative.default(0.5),
  /** Seed 002: the importance a fact kept by a decay review is reset to. @default 0.5 */
  keepImportance: nonNegative.default(0.5),
  /** Seed 002: model calls per review, searches included. @default 3 */
  reviewMaxRounds: z.number().int().min(1).max(10).default(3),
  /** Related memories shown with the memory under review, and per search. @default 5 */
  reviewRelatedLimit: positiveInteger.default(5),
  /** Most memories reviewed by one `review()` call (each costs up to `reviewMaxRounds` model calls). @default 20 */
  maxReviewsPerCall: positiveInteger.default(20),
  /** Operations of one extraction answer applied at most; the rest are skipped. @default 20 */
  maxOperationsPerTurn: positiveInteger.default(20),
  /** Facts the deterministic extraction may add from one user message. @default 3 */
  fallbackMaxFacts: positiveInteger.default(3),
  /** Context use (percent) at which the oldest half of the session is dropped at once. @default 95 */
  emergencyContextPercent: z.number().min(1).max(100).default(95),
  /** Seed 001: reflect on the policy every this many messages (when `evolution_enabled`). @default 20 */
  evolutionEveryMessages: positiveInteger.default(20),
  /** Seed 001: at most one long-term compression per scope in this many hours. @default 24 */
  compressionIntervalHours: nonNegative.default(24),
  /** Characters of memory text sent in one compression prompt; memories past it are left as they are. @default 100000 */
  compressionMaxPromptCharacters: positiveInteger.default(100_000),
  /** How long a model call may take. @default the memory's `modelTimeoutMs` (30 s) */
  modelTimeoutMs: positiveInteger.max(MAX_TIMEOUT_MS).optional(),
});
export type PipelineConfig = z.output<typeof pipelineConfigSchema>;
export type PipelineConfigInput = z.input<typeof pipelineConfigSchema>;
