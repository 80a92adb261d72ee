import type { StrategyConfig } from './config.js';
import { MEMORY_CATEGORIES, type MemoryCategory, type MemoryLevel } from './types.js';

/** Seed 004's three answers to "how does new content relate to what we remember?". */
export type MergeStrategy = 'merge_update' | 'keep_both' | 'create_new';

/** The decision taken for one piece of new content, with why. */
export interface UpdateDecision {
  strategy: MergeStrategy;
  /** True only for a merge: the activated memory's updatedAt becomes now. */
  shouldRefreshTimestamp: boolean;
  /** True when a merge lifts the memory one level (e.g. tag → summary). */
  shouldUpgradeLevel: boolean;
  reason: string;
  /** Cosine similarity to the nearest memory in scope; 0 when the scope was empty. */
  similarity: number;
  /** The nearest memory in scope, when there was one. */
  nearestId?: string;
}

/**
 * Rounding error forgiven at a threshold: a similarity within this of a
 * threshold counts as on it. A cosine that is 0.85 on paper can compute as
 * 0.8499999999999999 in float64, and a store that keeps float32 vectors (SQLite)
 * reads 0.7 as 0.699999988: 1e-6 covers float32's rounding (about 6e-8 per
 * component), so every store takes the same decision at a threshold.
 */
export const SIMILARITY_TOLERANCE = 1e-6;

/** Levels from most to least detailed. */
const LEVEL_ORDER: readonly MemoryLevel[] = ['full', 'summary', 'tag', 'trace', 'archive'];

/** 0 for full … 4 for archive. */
export function levelRank(level: MemoryLevel): number {
  return LEVEL_ORDER.indexOf(level);
}

/**
 * Decide merge / keep both / new from the similarity to the nearest memory in scope.
 * `compared` names the categories the nearest memory was looked for in (a fact is
 * compared with facts and core memories only): with no nearest memory, the reason
 * says which categories were empty rather than "no memory in this scope".
 */
export function decideUpdate(
  nearest: { id: string; level: MemoryLevel; similarity: number } | undefined,
  config: StrategyConfig,
  compared?: readonly MemoryCategory[],
): UpdateDecision {
  if (!nearest) {
    return {
      strategy: 'create_new',
      shouldRefreshTimestamp: false,
      shouldUpgradeLevel: false,
      reason: `${noneCompared(compared)}: created a new full memory`,
      similarity: 0,
    };
  }
  const { similarity } = nearest;
  const shown = shownSimilarity(similarity, config);
  if (similarity >= config.highSimilarity - SIMILARITY_TOLERANCE) {
    const upgraded = upgradedLevel(nearest.level, similarity, config);
    const shouldUpgradeLevel = upgraded !== nearest.level;
    const upgradeText = shouldUpgradeLevel
      ? `, level ${nearest.level} -> ${upgraded} (similarity > ${config.upgradeAbove[nearest.level as Exclude<MemoryLevel, 'full'>]})`
      : '';
    return {
      strategy: 'merge_update',
      shouldRefreshTimestamp: true,
      shouldUpgradeLevel,
      reason: `similarity ${shown} >= ${config.highSimilarity}: merged into the existing memory and refreshed its timestamp${upgradeText}`,
      similarity,
      nearestId: nearest.id,
    };
  }
  if (similarity >= config.mediumSimilarity - SIMILARITY_TOLERANCE) {
    return {
      strategy: 'keep_both',
      shouldRefreshTimestamp: false,
      shouldUpgradeLevel: false,
      reason: `similarity ${shown} in [${config.mediumSimilarity}, ${config.highSimilarity}): kept both; the old memory keeps its content, level and timestamp, the new one is full`,
      similarity,
      nearestId: nearest.id,
    };
  }
  return {
    strategy: 'create_new',
    shouldRefreshTimestamp: false,
    shouldUpgradeLevel: false,
    reason: `similarity ${shown} < ${config.mediumSimilarity}: created an independent new memory; the old one's content, level and timestamp are unchanged`,
    similarity,
    nearestId: nearest.id,
  };
}

const CATEGORY_NAMES: Record<MemoryCategory, string> = { system: 'system memory', core: 'core memory', fact: 'fact', episode: 'episode' };

/** "no fact or core memory in this scope yet (other categories are not compared)", or "no memory …" when every category was. */
function noneCompared(compared: readonly MemoryCategory[] | undefined): string {
  if (!compared || MEMORY_CATEGORIES.every((category) => compared.includes(category))) return 'no memory in this scope yet';
  // A fact is compared with facts and core memories: "no fact or core memory", the noun said once.
  const both = compared.includes('fact') && compared.includes('core');
  const names = compared.filter((category) => !both || (category !== 'fact' && category !== 'core')).map((category) => CATEGORY_NAMES[category]);
  if (both) names.unshift('fact or core memory');
  return `no ${names.join(' or ')} in this scope yet (other categories are not compared)`;
}

/**
 * The nearest memory's new weight. Merge: +highBoost of the gap to 1;
 * keep both: +mediumBoost of the gap; new: +lowBoost flat. Capped at 1.
 * Examples: 0.2 → 0.68 (merge), 0.3 → 0.51 (keep both), 0.3 → 0.4 (new).
 */
export function boostedWeight(weight: number, strategy: MergeStrategy, config: StrategyConfig): number {
  const gap = 1 - weight;
  const boosted =
    strategy === 'merge_update'
      ? weight + gap * config.highBoost
      : strategy === 'keep_both'
        ? weight + gap * config.mediumBoost
        : weight + config.lowBoost;
  return roundValue(Math.min(1, boosted));
}

/** The level a merge lifts a memory to: one step up when similarity is strictly above that level's threshold. */
export function upgradedLevel(level: MemoryLevel, similarity: number, config: StrategyConfig): MemoryLevel {
  if (level === 'full') return 'full';
  const threshold = config.upgradeAbove[level];
  if (similarity <= threshold + SIMILARITY_TOLERANCE) return level;
  return LEVEL_ORDER[levelRank(level) - 1] ?? level;
}

/**
 * A similarity as reasons show it: three decimals, or every digit when three
 * would show a threshold the similarity is not on ("0.850 in [0.6, 0.85)" or
 * "0.950 … (similarity > 0.95)" would contradict themselves).
 */
export function shownSimilarity(similarity: number, config: StrategyConfig): string {
  const shown = similarity.toFixed(3);
  const thresholds = [config.highSimilarity, config.mediumSimilarity, ...Object.values(config.upgradeAbove)];
  const misleading = thresholds.some((threshold) => Number(shown) === threshold && Math.abs(similarity - threshold) > SIMILARITY_TOLERANCE);
  return misleading ? String(similarity) : shown;
}

/** Six decimals keep stored numbers readable without losing anything that matters. */
export function roundValue(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
