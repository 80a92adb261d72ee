import type { DecayConfig } from './config.js';
import type { MemoryLevel, MemoryRecord } from './types.js';
import { levelRank, roundValue } from './update-strategy.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Days between two instants, never negative. */
export function daysBetween(fromIso: string, nowMs: number): number {
  return Math.max(0, (nowMs - Date.parse(fromIso)) / DAY_MS);
}

/** Seed 004: weight(t) = w0 / (1 + a·t), t in days. 1.0 → 0.909 (10 d), 0.714 (40 d), 0.5 (100 d), 0.357 (180 d). */
export function decayedWeight(baseWeight: number, ageDays: number, alpha: number): number {
  return roundValue(Math.min(1, baseWeight / (1 + alpha * Math.max(0, ageDays))));
}

/** The level a memory of this age should be at: full until 7 days, then summary, tag (30), trace (90), archive (180). */
export function levelForAge(ageDays: number, config: DecayConfig): MemoryLevel {
  const days = config.compressAfterDays;
  if (ageDays >= days.archive) return 'archive';
  if (ageDays >= days.trace) return 'trace';
  if (ageDays >= days.tag) return 'tag';
  if (ageDays >= days.summary) return 'summary';
  return 'full';
}

/** Whether a memory is exempt from every kind of decay (seed 002: system, core, importance >= 3). */
export function neverDecays(record: Pick<MemoryRecord, 'category' | 'importance'>, config: DecayConfig): boolean {
  return record.category === 'system' || record.category === 'core' || record.importance >= config.neverDecayImportance;
}

/**
 * A memory's weight and importance at `nowMs` by the decay rules: what a
 * maintenance pass would write now, whatever was stored last (a pass may not
 * have run since, or skipped a change smaller than `minWeightChange`). A boost
 * or a merge starts from these, so it gives the same result whether or not a
 * pass ran just before. Memories that never decay keep their stored values.
 */
export function currentValues(
  record: Pick<MemoryRecord, 'category' | 'importance' | 'weight' | 'baseWeight' | 'baseImportance' | 'updatedAt'>,
  nowMs: number,
  config: DecayConfig,
): { weight: number; importance: number } {
  if (neverDecays(record, config)) return { weight: record.weight, importance: record.importance };
  return decayedValues(record, daysBetween(record.updatedAt, nowMs), config);
}

/** Seed 002 / 004 decay of a decaying memory: the weight by age, the importance by whole periods of its category. */
function decayedValues(
  record: Pick<MemoryRecord, 'category' | 'baseWeight' | 'baseImportance'>,
  ageDays: number,
  config: DecayConfig,
): { weight: number; importance: number } {
  const rule = record.category === 'episode' ? config.episode : config.fact;
  return {
    weight: decayedWeight(record.baseWeight, ageDays, config.weightAlpha),
    importance: roundValue(record.baseImportance * rule.factor ** Math.floor(ageDays / rule.everyDays)),
  };
}

/** What passive maintenance would do to one memory at `nowMs`. */
export interface MaintenancePlan {
  kind: 'keep' | 'update' | 'delete';
  /** The record's decayed fields when kind is `update` (content is decided by the compressor). */
  weight: number;
  importance: number;
  /** Set when the memory must be compressed to a lower level. */
  compressTo?: MemoryLevel;
  /** One line per rule that fired. */
  reasons: string[];
}

/**
 * Plan passive maintenance for one memory. Pure: the result depends only on
 * the record, `nowMs` and the config, so running it twice at the same time
 * plans nothing the second time.
 */
export function planMaintenance(record: MemoryRecord, nowMs: number, config: DecayConfig): MaintenancePlan {
  const keep: MaintenancePlan = { kind: 'keep', weight: record.weight, importance: record.importance, reasons: [] };
  if (neverDecays(record, config)) return keep;

  const ageDays = daysBetween(record.updatedAt, nowMs);
  const reasons: string[] = [];

  const rule = record.category === 'episode' ? config.episode : config.fact;
  const { weight, importance } = decayedValues(record, ageDays, config);

  if (record.category === 'episode' && ageDays >= config.episode.deleteAfterDays) {
    return {
      ...keep,
      kind: 'delete',
      reasons: [`episode is ${formatDays(ageDays)} old (deleted after ${config.episode.deleteAfterDays} days)`],
    };
  }
  if (record.category === 'fact' && importance < config.fact.deleteBelowImportance) {
    return {
      ...keep,
      kind: 'delete',
      importance,
      reasons: [`fact importance decayed to ${importance} (< ${config.fact.deleteBelowImportance})`],
    };
  }

  if (weight !== record.weight) {
    reasons.push(`weight ${record.weight} -> ${weight} (${formatDays(ageDays)} since last update)`);
  }
  if (importance !== record.importance) {
    reasons.push(`importance ${record.importance} -> ${importance} (x${rule.factor} per ${rule.everyDays} days)`);
  }
  const target = levelForAge(ageDays, config);
  const compressTo = levelRank(target) > levelRank(record.level) ? target : undefined;
  if (compressTo) reasons.push(`level ${record.level} -> ${compressTo} (${formatDays(ageDays)} since last update)`);

  if (reasons.length === 0) return keep;
  // Weight alone, by less than minWeightChange since it was written: not worth a version yet.
  const weightOnly = importance === record.importance && !compressTo;
  if (weightOnly && Math.abs(weight - record.weight) < config.minWeightChange) return keep;
  return { kind: 'update', weight, importance, ...(compressTo ? { compressTo } : {}), reasons };
}

/**
 * The base value that yields `current` at this age, so a boost applied to a
 * memory whose timestamp is not refreshed survives the next maintenance pass.
 */
export function baseWeightFor(current: number, ageDays: number, alpha: number): number {
  return roundValue(current * (1 + alpha * Math.max(0, ageDays)));
}

/**
 * The base importance that yields the record's current importance at this
 * age under its category's whole-period decay, so an importance set without
 * refreshing the timestamp (a boost, a review) survives the next maintenance
 * pass. Categories that never decay keep their importance as the base.
 */
export function baseImportanceFor(record: Pick<MemoryRecord, 'category' | 'importance'>, ageDays: number, config: DecayConfig): number {
  if (record.category !== 'fact' && record.category !== 'episode') return record.importance;
  const rule = record.category === 'episode' ? config.episode : config.fact;
  const periods = Math.floor(ageDays / rule.everyDays);
  const factor = rule.factor ** periods;
  return factor === 0 ? record.importance : roundValue(record.importance / factor);
}

function formatDays(days: number): string {
  const rounded = Math.round(days * 10) / 10;
  return `${rounded} day${rounded === 1 ? '' : 's'}`;
}
