import type { AddResult } from '../memory-types.js';
import type { MemoryRecord } from '../types.js';

/** Something the pipeline was asked (by the model or the caller) to do and did not, with why. */
export interface SkippedOperation {
  /** The operation as the model wrote it (one line), or a short description. */
  operation: string;
  reason: string;
}

/** How a step reached its answer. `fallback`: the deterministic path, because no model is set or it failed. */
export type DecisionSource = 'model' | 'fallback';

/** One applied operation of an extraction. */
export type AppliedOperation =
  | {
      kind: 'add';
      /** The fact as the model (or the fallback) stated it; `result.memory.content` is what was stored. */
      content: string;
      /** The strategy engine's decision (merge / keep both / new) and the memory written. */
      result: AddResult;
    }
  | { kind: 'update'; id: string; before: MemoryRecord; after: MemoryRecord }
  | { kind: 'boost'; id: string; importance: { from: number; to: number }; after: MemoryRecord }
  | { kind: 'delete'; id: string; before: MemoryRecord };

/** What `extract` did with one turn. */
export interface ExtractionReport {
  source: DecisionSource;
  /** Why the model's answer was not used (failure, timeout, nothing parseable), when it was asked. */
  modelFallback?: string;
  applied: AppliedOperation[];
  /** Operations not applied: unparseable lines, unknown or foreign ids, refused deletes, over the limit. */
  skipped: SkippedOperation[];
  /** Ids of facts whose importance reached the promotion threshold in this turn (`afterTurn` reviews them). */
  dueForReview: string[];
}

/** Seed 002's reviewer decisions; `none` when nothing was decided (no model, failure, no decision in time). */
export type ReviewDecision = 'promote' | 'keep' | 'delete' | 'none';

/** The review of one memory. */
export interface ReviewOutcome {
  id: string;
  kind: 'promotion' | 'decay';
  decision: ReviewDecision;
  source: DecisionSource;
  /** Model calls made. */
  rounds: number;
  /** The `[SEARCH: …]` queries the model asked for, in order. */
  searches: string[];
  /** The model's final answer (trimmed), or why nothing was decided. */
  reason: string;
  modelFallback?: string;
  /** The memory after the decision (absent when it was deleted or left unchanged). */
  after?: MemoryRecord;
}

/** What `review` did. */
export interface ReviewReport {
  reviewed: ReviewOutcome[];
  /** Ids asked for that were not reviewed (not found, out of scope, not due), with why. */
  skipped: SkippedOperation[];
}
